#include "w4a16_golden.hpp"

#include <fstream>
#include <sstream>

namespace baracuda::test {

std::vector<W4a16Case> load_w4a16_golden(const std::string& path, std::string* error) {
  std::vector<W4a16Case> cases;
  std::ifstream file(path);
  if (!file) {
    *error = "missing golden data: cannot open " + path + " (run tests/data/gen_w4a16_golden.py)";
    return cases;
  }
  std::string line;
  int line_no = 0;
  while (std::getline(file, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string word;
    in >> word;
    if (word == "case") {
      W4a16Case c;
      std::string kk, nn, gg, ss, aa;
      int sym = 0, act = 0;
      in >> c.name >> kk >> c.shape.k >> nn >> c.shape.n >> gg >> c.shape.group >> ss >> sym >> aa >> act;
      if (!in || kk != "K" || nn != "N" || gg != "group" || ss != "sym" || aa != "act_order") {
        *error = "line " + std::to_string(line_no) + ": malformed case header";
        return {};
      }
      c.sym = sym != 0;
      c.act_order = act != 0;
      cases.push_back(std::move(c));
      continue;
    }
    if (cases.empty()) {
      *error = "line " + std::to_string(line_no) + ": tensor before the first case";
      return {};
    }
    W4a16Tensor g;
    std::string dims;
    in >> g.kind >> dims;
    const auto x = dims.find('x');
    if (!in || x == std::string::npos || (g.kind != "i32" && g.kind != "u16" && g.kind != "f32")) {
      *error = "line " + std::to_string(line_no) + ": malformed tensor line";
      return {};
    }
    g.d0 = std::stoll(dims.substr(0, x));
    g.d1 = std::stoll(dims.substr(x + 1));
    std::string hex;
    while (in >> hex) g.bits.push_back(static_cast<uint32_t>(std::stoul(hex, nullptr, 16)));
    if (static_cast<int64_t>(g.bits.size()) != g.d0 * g.d1) {
      *error = "line " + std::to_string(line_no) + ": " + word + " has " + std::to_string(g.bits.size()) +
               " values for " + dims;
      return {};
    }
    cases.back().t[word] = std::move(g);
  }
  if (cases.empty()) *error = "missing golden data: " + path + " holds no case";
  return cases;
}

}  // namespace baracuda::test

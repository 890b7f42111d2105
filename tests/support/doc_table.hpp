// Test support: a family's doc page holds a table generated from its catalog, between the markers
//   <!-- catalog-table:begin (generated from SOURCE; checked by TEST) -->
//   <!-- catalog-table:end -->
// and its test checks that the page's table is the one the catalog gives today.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace baracuda::test {

/// Expects the table of docs/ops/`page` (between the markers naming `source` and `test`) to be `table`.
/// BARACUDA_TEST_DATA_DIR (tests/data) locates the source tree.
inline void expect_doc_table(std::string_view page, std::string_view source, std::string_view test,
                             const std::string& table) {
  const std::string path = std::string(BARACUDA_TEST_DATA_DIR) + "/../../docs/ops/" + std::string(page);
  std::ifstream f(path);
  ASSERT_TRUE(f) << "cannot open " << path;
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  const std::string begin = "<!-- catalog-table:begin (generated from " + std::string(source) + "; checked by " +
                            std::string(test) + ") -->\n";
  const std::string end = "<!-- catalog-table:end -->";
  const size_t a = doc.find(begin), b = doc.find(end);
  ASSERT_TRUE(a != std::string::npos && b != std::string::npos && a < b) << "markers missing in " << path;
  EXPECT_EQ(doc.substr(a + begin.size(), b - a - begin.size()), table)
      << "docs/ops/" << page << "'s table differs from the catalog; the expected table is:\n"
      << table;
}

}  // namespace baracuda::test

# Installation and the exported CMake package (find_package(baracuda)).

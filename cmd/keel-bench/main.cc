#include <iostream>

#include "keel/cmd/keel-bench/bench_main.h"

int main(int argc, char** argv) { return keel::bench::Main(argc, argv, std::cout, std::cerr); }

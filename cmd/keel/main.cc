#include "keel/cmd/keel/cli.h"

int main(int argc, char** argv) { return keel::cli::Main(argc, argv); }

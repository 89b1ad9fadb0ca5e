// keel-host: Keel's command line with the host's own driver registered.
// `keel-host drivers` lists host-journal; `--driver host-journal` selects it.
#include "keel/cmd/keel/cli.h"

int main(int argc, char** argv) { return keel::cli::Main(argc, argv); }

# Every dependency comes from Debian 12 packages through find_package.
# Boost: Debian ships 1.74 as the default and 1.81 beside it; Keel needs 1.81.
set(Boost_NO_WARN_NEW_VERSIONS ON)
find_package(Boost 1.81.0 EXACT REQUIRED COMPONENTS program_options json url)
find_package(absl REQUIRED)
find_package(Protobuf REQUIRED)
find_package(leveldb REQUIRED)
find_package(spdlog REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenSSL 3 REQUIRED)
# zstd for compressed lakehouse export files (.jsonl.zst).
find_package(zstd REQUIRED)
# libnats (the NATS C client) for the jetstream driver. Debian 12's
# libnats-dev ships a CMake package (cnats) that names a static library and
# libprotobuf-c.so, which the package does not install, so find_package
# fails; its pkg-config file is sound.
find_package(PkgConfig REQUIRED)
pkg_check_modules(NATS REQUIRED IMPORTED_TARGET libnats)

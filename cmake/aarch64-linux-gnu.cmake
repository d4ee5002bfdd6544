# Cross build for aarch64 with Debian's g++-aarch64-linux-gnu and :arm64 packages; tests run
# under qemu-aarch64 (one ctest entry per emulated CPU, see tests/CMakeLists.txt).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# No -L: the loader and libc must both be libc6:arm64 (the cross libc6-arm64-cross is an older
# build; mixing its loader with the newer libc hangs every pthread_create under qemu).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)

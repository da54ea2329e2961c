#!/usr/bin/env bash
# Copies the shared libraries the given programs load (as ldd resolves them
# here) into DIR, so that they run on a machine that lacks some of them (a
# GPU host without Gloo, libfabric or libuv): run them there with
# LD_LIBRARY_PATH=DIR. The C library and the dynamic loader stay the host's
# own: they must match its kernel interface, and every Linux host has them.
# libfabric is opened on first use (dlopen), not linked, so it is not
# carried: --transport fabric there needs the host's own. Nor are the CUDA
# driver and NCCL (a GPU host has its own, matched to its driver) and the C++
# runtime (the host's is at least as new).
#
# Usage: ci/bundle_libs.sh PROGRAM... DIR
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: ci/bundle_libs.sh PROGRAM... DIR" >&2; exit 2; }
dir="${*: -1}"
programs=("${@:1:$#-1}")
mkdir -p "$dir"
copied=0
for p in "${programs[@]}"; do
  [ -x "$p" ] || { echo "bundle_libs: $p is not a program: build it first" >&2; exit 2; }
  if ldd "$p" | grep -q "not found"; then
    echo "bundle_libs: $p needs libraries this host lacks:" >&2
    ldd "$p" | grep "not found" >&2
    exit 1
  fi
  while read -r lib; do
    case "$(basename "$lib")" in
      libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*.so.* | libresolv.so.*) continue ;;
      # The GPU host's own, matched to its driver (and libnccl is over 200 MB);
      # its C++ runtime is as new as ours or newer, and others there need it.
      libcuda.so.* | libnccl.so.* | libstdc++.so.* | libgcc_s.so.*) continue ;;
    esac
    if [ ! -e "$dir/$(basename "$lib")" ]; then
      cp -L "$lib" "$dir/"
      copied=$((copied + 1))
    fi
  done < <(ldd "$p" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
done
echo "bundle_libs: $copied libraries in $dir ($(du -sh "$dir" | cut -f1))"

// libfabric, opened on first use instead of at program start.
//
// Debian's libfabric pulls in the PSM libraries, whose constructors time the
// CPU clock with a few hundred short sleeps: about 0.2 s added to the start of
// every process that links libfabric, whether or not it ever opens a fabric
// (every omni-bench rank, every test). The six functions libfabric exports
// and we call are defined here instead, each forwarding to the library opened
// with dlopen the first time one of them is called; every other libfabric
// call goes through the ops tables of the objects these return. The symbols
// are hidden, so a program cannot hand them to libfabric or its providers in
// place of libfabric's own.
//
// Those same constructors take SIGINT, SIGTERM, SIGSEGV and more for
// themselves (tools/process/library_signals.h says what they do with them);
// the handlers the program had before the library was opened are put back.
#include "engine/transport/fabric/fabric_library.h"

#include <dlfcn.h>
#include <signal.h>

#pragma GCC visibility push(hidden)
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#pragma GCC visibility pop

namespace {

// libfabric's soname: its ABI has been 1 since 1.0.
constexpr const char* kSoname = "libfabric.so.1";

struct FabricLibrary {
  decltype(&fi_getinfo) getinfo = nullptr;
  decltype(&fi_freeinfo) freeinfo = nullptr;
  decltype(&fi_dupinfo) dupinfo = nullptr;
  decltype(&fi_fabric) fabric = nullptr;
  decltype(&fi_version) version = nullptr;
  decltype(&fi_strerror) strerror = nullptr;
  std::string error;  // why it could not be opened; empty when it was
};

template <typename Fn>
bool resolve(void* handle, const char* name, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (!fn) error = std::string(kSoname) + " has no " + name + " (is it libfabric 1.x?)";
  return fn != nullptr;
}

// Every signal's handler as it was when made, put back when destroyed.
class SignalHandlersKept {
 public:
  SignalHandlersKept() {
    for (int i = 0; i < kCount; ++i) kept_[i] = sigaction(kSignals[i], nullptr, &saved_[i]) == 0;
  }
  ~SignalHandlersKept() {
    for (int i = 0; i < kCount; ++i)
      if (kept_[i]) sigaction(kSignals[i], &saved_[i], nullptr);
  }

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE};
  static constexpr int kCount = sizeof(kSignals) / sizeof(kSignals[0]);
  struct sigaction saved_[kCount] = {};
  bool kept_[kCount] = {};
};

FabricLibrary open_library() {
  FabricLibrary lib;
  const SignalHandlersKept handlers;
  // Global, as a linked library would be: providers loaded later find it.
  void* handle = dlopen(kSoname, RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char* why = dlerror();
    lib.error = std::string("could not load ") + kSoname + " (" + (why ? why : "no reason given") +
                "): install libfabric1, or run with --transport tcp";
    return lib;
  }
  if (resolve(handle, "fi_getinfo", lib.getinfo, lib.error) &&
      resolve(handle, "fi_freeinfo", lib.freeinfo, lib.error) &&
      resolve(handle, "fi_dupinfo", lib.dupinfo, lib.error) && resolve(handle, "fi_fabric", lib.fabric, lib.error) &&
      resolve(handle, "fi_version", lib.version, lib.error) && resolve(handle, "fi_strerror", lib.strerror, lib.error))
    return lib;
  return FabricLibrary{.error = lib.error};
}

const FabricLibrary& library() {
  static const FabricLibrary lib = open_library();  // thread-safe, once
  return lib;
}

}  // namespace

namespace omnib {

const std::string& fabric_library_problem() { return library().error; }

}  // namespace omnib

extern "C" {

int fi_getinfo(uint32_t version, const char* node, const char* service, uint64_t flags, const struct fi_info* hints,
               struct fi_info** info) {
  const FabricLibrary& lib = library();
  if (!lib.getinfo) return -FI_ENOSYS;
  return lib.getinfo(version, node, service, flags, hints, info);
}

void fi_freeinfo(struct fi_info* info) {
  // Nothing can have been allocated without the library.
  if (library().freeinfo) library().freeinfo(info);
}

struct fi_info* fi_dupinfo(const struct fi_info* info) {
  return library().dupinfo ? library().dupinfo(info) : nullptr;
}

int fi_fabric(struct fi_fabric_attr* attr, struct fid_fabric** fabric, void* context) {
  return library().fabric ? library().fabric(attr, fabric, context) : -FI_ENOSYS;
}

uint32_t fi_version(void) { return library().version ? library().version() : 0; }

const char* fi_strerror(int errnum) {
  const FabricLibrary& lib = library();
  // Every call fails with FI_ENOSYS when the library is missing: say why.
  return lib.strerror ? lib.strerror(errnum) : lib.error.c_str();
}

}  // extern "C"

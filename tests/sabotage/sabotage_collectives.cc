#include "tests/sabotage/sabotage_collectives.h"

#include <fcntl.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/collective/collective.h"
#include "engine/omni/omni_collective.h"
#include "tools/measure/cpu_time.h"
#include "tools/measure/memory_floor.h"

namespace omnib::sabotage {
namespace {

enum class Fault {
  kNoop,
  kIdentity,
  kCorruptOneCall,
  kOneElement,
  kTail,
  kDoubleCpu,
  kSleep,
  kThrow,
  kThrowInThread,
  kLeakMemory,
  kLeakDescriptor
};

constexpr size_t kDefaultLeakPerCall = 16 << 10;
constexpr size_t kMaxLeakPerCall = 16 << 20;
constexpr double kDefaultSlowdown = 2.0;

// OMNIB_SABOTAGE_LEAK_BYTES as bytes per call in [1, 16 MiB]; the default
// when unset; nullopt with an error message in `bad` when set but not such
// a count. The soak check must catch leaks far smaller than the default.
std::optional<size_t> leak_per_call(std::string* bad) {
  const char* text = std::getenv("OMNIB_SABOTAGE_LEAK_BYTES");
  if (!text || !*text) return kDefaultLeakPerCall;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || text[0] == '-' || n < 1 || n > kMaxLeakPerCall) {
    if (bad)
      *bad = std::string("OMNIB_SABOTAGE_LEAK_BYTES='") + text + "': give bytes per call from 1 to " +
             std::to_string(kMaxLeakPerCall) + ", e.g. 1024";
    return std::nullopt;
  }
  return static_cast<size_t>(n);
}

// OMNIB_SABOTAGE_SLOWDOWN as a factor in (1, 100]; nullopt when unset; an
// error message in `bad` when set but not such a factor.
std::optional<double> slowdown_factor(std::string* bad) {
  const char* text = std::getenv("OMNIB_SABOTAGE_SLOWDOWN");
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  const double f = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(f > 1 && f <= 100)) {
    if (bad) *bad = std::string("OMNIB_SABOTAGE_SLOWDOWN='") + text + "': give a factor above 1 and at most 100, e.g. 1.5";
    return std::nullopt;
  }
  return f;
}

// How long the sleep sabotage pauses after a call that took `call`: a fixed
// OMNIB_SABOTAGE_SLEEP_US, else (factor - 1) times the call itself, so that
// omni's calls take `factor` times as long as its own code makes them.
std::chrono::microseconds pause_after(std::chrono::steady_clock::duration call) {
  if (const char* us = std::getenv("OMNIB_SABOTAGE_SLEEP_US"); us && *us)
    return std::chrono::microseconds(std::atoll(us));
  const double factor = slowdown_factor(nullptr).value_or(kDefaultSlowdown);
  const double call_us = std::chrono::duration<double, std::micro>(call).count();
  return std::chrono::microseconds(static_cast<int64_t>((factor - 1) * call_us));
}
// A leak of 1 KiB per call keeps growing for 262,144 calls: past the later
// half of the CI soak's calls (the half its verdict judges) on any machine
// that makes fewer than about 5,800 rounds a second (this 2-core one: 630).
constexpr size_t kMaxLeakedBytes = size_t{256} << 20;
constexpr size_t kMaxLeakedDescriptors = 1000;

// Wraps a correct collective and breaks it in one way.
class Saboteur final : public Collective {
 public:
  Saboteur(std::unique_ptr<Collective> inner, Fault fault)
      : inner_(std::move(inner)), fault_(fault), leak_per_call_(leak_per_call(nullptr).value_or(kDefaultLeakPerCall)) {}

  Status allreduce(const TensorView& in, const TensorView& out) override {
    ++calls_;
    switch (fault_) {
      case Fault::kNoop:
        return Status::ok();
      case Fault::kThrow:
        throw std::runtime_error("sabotage-throw threw in allreduce");
      case Fault::kThrowInThread:
        std::thread([] { throw std::runtime_error("sabotage-throw-thread threw in a thread"); }).join();
        return Status::ok();
      case Fault::kIdentity:
        if (out.data != in.data && in.data) std::memcpy(out.data, in.data, in.bytes());
        return Status::ok();
      case Fault::kCorruptOneCall: {
        OMNIB_RETURN_IF_ERROR(inner_->allreduce(in, out));
        if (calls_ == 3 && out.data && out.count > 0) {
          // One block of 256 elements in the middle, set to a value no sum holds.
          const size_t first = out.count / 2, n = std::min<size_t>(256, out.count - first);
          std::memset(element(out, first), 0x55, n * dtype_size(out.dtype));
        }
        return Status::ok();
      }
      case Fault::kOneElement: {
        OMNIB_RETURN_IF_ERROR(inner_->allreduce(in, out));
        // A near miss on the third call: the lowest bit of the middle element
        // (little-endian: its first byte), which only an element-by-element
        // bit comparison at the type's size sees in the right place.
        if (calls_ == 3 && out.data && out.count > 0) *element(out, out.count / 2) ^= 1;
        return Status::ok();
      }
      case Fault::kTail: {
        // The last quarter keeps whatever the output held before the call.
        const size_t first = out.count - out.count / 4;
        std::vector<uint8_t> kept;
        if (out.data) kept.assign(element(out, first), static_cast<uint8_t*>(out.data) + out.bytes());
        OMNIB_RETURN_IF_ERROR(inner_->allreduce(in, out));
        if (out.data) std::memcpy(element(out, first), kept.data(), kept.size());
        return Status::ok();
      }
      case Fault::kDoubleCpu: {
        const CpuTime before = process_cpu_time(CpuReading::kCpuOnly);
        OMNIB_RETURN_IF_ERROR(inner_->allreduce(in, out));
        const double used = (process_cpu_time(CpuReading::kCpuOnly) - before).total_us();
        const CpuTime spin_start = process_cpu_time(CpuReading::kCpuOnly);
        volatile uint64_t sink = 0;
        while ((process_cpu_time(CpuReading::kCpuOnly) - spin_start).total_us() < used)
          for (int i = 0; i < 1000; ++i) sink = sink + static_cast<uint64_t>(i);
        return Status::ok();
      }
      case Fault::kLeakMemory:
        if (leaked_.size() * leak_per_call_ < kMaxLeakedBytes) {
          leaked_.emplace_back(new char[leak_per_call_]);
          std::memset(leaked_.back().get(), 0x5a, leak_per_call_);  // resident, not just reserved
        }
        return inner_->allreduce(in, out);
      case Fault::kLeakDescriptor:
        if (leaked_fds_ < kMaxLeakedDescriptors && open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0) ++leaked_fds_;
        return inner_->allreduce(in, out);
      case Fault::kSleep: {
        const auto t0 = std::chrono::steady_clock::now();
        OMNIB_RETURN_IF_ERROR(inner_->allreduce(in, out));
        std::this_thread::sleep_for(pause_after(std::chrono::steady_clock::now() - t0));
        return Status::ok();
      }
    }
    return internal_error("unknown fault");
  }

  std::optional<ByteCounters> wire_counters() const override { return inner_->wire_counters(); }
  std::string wire_note() const override { return inner_->wire_note(); }

 private:
  static uint8_t* element(const TensorView& t, size_t i) {
    return static_cast<uint8_t*>(t.data) + i * dtype_size(t.dtype);
  }

  std::unique_ptr<Collective> inner_;
  Fault fault_;
  uint64_t calls_ = 0;
  size_t leak_per_call_;
  std::vector<std::unique_ptr<char[]>> leaked_;
  size_t leaked_fds_ = 0;
};

// `base` with its create() wrapped in a Saboteur.
CollectiveInfo broken(const CollectiveInfo& base, std::string name, Fault fault) {
  CollectiveInfo info = base;
  info.name = std::move(name);
  info.summary = "deliberately broken (" + base.name + "): for tests of the checks only";
  auto create = base.create;
  info.create = [create, fault](const CollectiveSetup& s) -> Result<std::unique_ptr<Collective>> {
    auto inner = create(s);
    if (!inner.is_ok()) return inner.status();
    return std::unique_ptr<Collective>(new Saboteur(inner.take(), fault));
  };
  return info;
}

Status replace_omni(const std::string& how) {
  const CollectiveInfo* omni = CollectiveRegistry::instance().find("omni");
  if (!omni) return internal_error("no omni to sabotage");
  if (how == "dense") {
    CollectiveInfo info = *omni;
    info.create = [](const CollectiveSetup& s) {
      OmniOptions o;
      o.dense = true;
      return OmniCollective::create(s, o);
    };
    return CollectiveRegistry::instance().replace(info);
  }
  Fault fault;
  if (how == "noop") fault = Fault::kNoop;
  else if (how == "double-cpu") fault = Fault::kDoubleCpu;
  else if (how == "sleep") fault = Fault::kSleep;
  else if (how == "leak-memory") fault = Fault::kLeakMemory;
  else if (how == "leak-fd") fault = Fault::kLeakDescriptor;
  else return usage_error("OMNIB_SABOTAGE_OMNI='" + how + "': use noop, dense, double-cpu, sleep, leak-memory or leak-fd");
  std::string bad;
  if (fault == Fault::kSleep && !slowdown_factor(&bad) && !bad.empty()) return usage_error(bad);
  if (fault == Fault::kLeakMemory && !leak_per_call(&bad)) return usage_error(bad);
  return CollectiveRegistry::instance().replace(broken(*omni, "omni", fault));
}

// OMNIB_SABOTAGE_FLOOR=F: every floor pass this process times is F times
// its measured time (a factor in (1, 100]).
Status inflate_floor() {
  const char* text = std::getenv("OMNIB_SABOTAGE_FLOOR");
  if (!text || !*text) return Status::ok();
  char* end = nullptr;
  const double f = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(f > 1 && f <= 100))
    return usage_error(std::string("OMNIB_SABOTAGE_FLOOR='") + text + "': give a factor above 1 and at most 100, e.g. 2");
  scale_floor_passes(f);
  return Status::ok();
}

}  // namespace

Status install() {
  CollectiveRegistry& registry = CollectiveRegistry::instance();
  const CollectiveInfo* ring = registry.find("ring");
  if (!ring) return internal_error("no ring algorithm to wrap");
  const CollectiveInfo base = *ring;
  registry.add(broken(base, "sabotage-noop", Fault::kNoop));
  registry.add(broken(base, "sabotage-identity", Fault::kIdentity));
  registry.add(broken(base, "sabotage-corrupt", Fault::kCorruptOneCall));
  registry.add(broken(base, "sabotage-one-element", Fault::kOneElement));
  registry.add(broken(base, "sabotage-tail", Fault::kTail));
  registry.add(broken(base, "sabotage-throw", Fault::kThrow));
  registry.add(broken(base, "sabotage-throw-thread", Fault::kThrowInThread));
  OMNIB_RETURN_IF_ERROR(inflate_floor());
  if (const char* how = std::getenv("OMNIB_SABOTAGE_OMNI"); how && *how) return replace_omni(how);
  return Status::ok();
}

}  // namespace omnib::sabotage

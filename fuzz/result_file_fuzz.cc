// The result-file loader (tools/compare/result_file.cc parse_result_document),
// which compare, plot and sweep --resume use on files from anywhere: a
// document either loads, and then every record survives a write and a read
// unchanged and ran with positive times, or is refused as a usage error that
// names the file. Never a crash, an exception or an abort.
//
// Input: the file's text.
#include <string>

#include "fuzz/fuzz_input.h"
#include "tools/compare/result_file.h"

using namespace omnib;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string kName = "fuzzed.json";
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto file = parse_result_document(text, kName);
  if (!file.is_ok()) {
    if (file.status().code() != Code::kUsage || file.status().message().find(kName) == std::string::npos)
      fuzz::fail("a refusal that is not a usage error naming the file");
    return 0;
  }
  for (const auto& r : file.value().records) {
    if (!r.skipped && !(r.time_us.median > 0)) fuzz::fail("a record that ran with a non-positive median loaded");
    const nlohmann::json written = to_json(r);
    auto again = record_from_json(written, kSchemaVersion, nullptr);
    if (!again.is_ok()) fuzz::fail("a loaded record does not read back after writing");
    if (to_json(again.value()) != written) fuzz::fail("a loaded record changes when written and read again");
  }
  return 0;
}

// The trace reader (tools/trace/chrome_trace.cc parse_trace_document), which
// `trace summarize` uses on files from anywhere, and the summary it then
// makes. A document either loads, and then it writes back to a trace that
// loads again with the same ranks and calls, and summarize_trace summarizes
// it or refuses it as a usage error; or it is refused as a usage error that
// names the file. Never a crash, an exception, an abort, or a stack overflow
// (deeply nested text is refused before it is parsed).
//
// Input: the file's text.
#include <optional>
#include <string>

#include "fuzz/fuzz_input.h"
#include "tools/trace/chrome_trace.h"
#include "tools/trace/trace_summary.h"

using namespace omnib;

namespace {

size_t call_count(const TraceDocument& doc) {
  size_t n = 0;
  for (const auto& r : doc.ranks) n += r.calls.size();
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string kName = "fuzzed-trace.json";
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto doc = parse_trace_document(text, kName);
  if (!doc.is_ok()) {
    if (doc.status().code() != Code::kUsage || doc.status().message().find(kName) == std::string::npos)
      fuzz::fail("a refusal that is not a usage error naming the file");
    return 0;
  }
  auto again = parse_trace_document(to_chrome_trace(doc.value()).dump(), kName);
  if (!again.is_ok()) fuzz::fail("a loaded trace does not load again after writing");
  if (again.value().ranks.size() != doc.value().ranks.size() || call_count(again.value()) != call_count(doc.value()))
    fuzz::fail("a loaded trace changes its ranks or calls when written and read again");
  auto summary = summarize_trace(doc.value(), std::nullopt);
  if (!summary.is_ok() && summary.status().code() != Code::kUsage)
    fuzz::fail("summarizing a loaded trace failed with something other than a usage error");
  return 0;
}

#include "engine/omni/settings/encoding_policy.h"

namespace omnib {

const char* encoding_policy_name(EncodingPolicy p) {
  switch (p) {
    case EncodingPolicy::kAuto: return "auto";
    case EncodingPolicy::kBlocks: return "blocks";
    case EncodingPolicy::kBitmap: return "bitmap";
    case EncodingPolicy::kCoo: return "coo";
  }
  return "?";
}

bool parse_encoding_policy(const std::string& text, EncodingPolicy* out) {
  for (EncodingPolicy p : {EncodingPolicy::kAuto, EncodingPolicy::kBlocks, EncodingPolicy::kBitmap, EncodingPolicy::kCoo})
    if (text == encoding_policy_name(p)) {
      *out = p;
      return true;
    }
  return false;
}

}  // namespace omnib

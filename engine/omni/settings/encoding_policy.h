// What --encoding asks of the omni engine (engine/omni/batch_encoding.h):
// auto picks, batch by batch, whichever of whole blocks, a bitmap per block
// or element offsets makes the batch smallest; the others force one encoding
// on every non-empty batch, to study them (`coo` at the offsets' narrower
// width: 32 bits, or 16 within pages).
#pragma once

#include <string>

namespace omnib {

enum class EncodingPolicy { kAuto, kBlocks, kBitmap, kCoo };

// "auto", "blocks", "bitmap", "coo".
const char* encoding_policy_name(EncodingPolicy p);
bool parse_encoding_policy(const std::string& text, EncodingPolicy* out);

}  // namespace omnib

// Comma lists on the command line ("omni,ring", "0.01,0.1"): split once, the
// same way everywhere.
#pragma once

#include <string>
#include <vector>

namespace omnib {

// Splits "a,b,c"; empty items are dropped.
std::vector<std::string> split_list(const std::string& text);

}  // namespace omnib

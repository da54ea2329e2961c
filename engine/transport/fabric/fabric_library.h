// libfabric is opened the first time it is used, not linked
// (fabric_library.cc says why). A host without it runs everything but
// --transport fabric, which then says what is missing.
#pragma once

#include <string>

namespace omnib {

// Opens libfabric if that has not been tried yet. "" when it is usable;
// else why not and what to do, for a message.
const std::string& fabric_library_problem();

}  // namespace omnib

#include "tools/net/tcp_retransmits.h"

#include <fstream>
#include <sstream>
#include <vector>

namespace omnib {

Result<uint64_t> parse_tcp_retransmits(const std::string& snmp) {
  std::istringstream lines(snmp);
  std::string line;
  std::vector<std::string> names;
  while (std::getline(lines, line)) {
    if (line.rfind("Tcp:", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    std::vector<std::string> row;
    for (std::string f; fields >> f;) row.push_back(f);
    if (names.empty()) {  // the header comes first, then the values
      names = row;
      continue;
    }
    for (size_t i = 0; i < names.size() && i < row.size(); ++i) {
      if (names[i] != "RetransSegs") continue;
      try {
        return static_cast<uint64_t>(std::stoull(row[i]));
      } catch (const std::exception&) {
        break;
      }
    }
    break;
  }
  return unavailable_error("no Tcp RetransSegs in /proc/self/net/snmp");
}

Result<uint64_t> tcp_retransmitted_segments() {
  std::ifstream in("/proc/self/net/snmp");
  if (!in) return unavailable_error("cannot read /proc/self/net/snmp");
  std::stringstream text;
  text << in.rdbuf();
  return parse_tcp_retransmits(text.str());
}

}  // namespace omnib

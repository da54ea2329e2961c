// The network options a benchmark command takes: --net, --link-rate,
// --link-delay, their CLI binding, checks, and how the JSON records them.
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "engine/base/status.h"
#include "tools/config/link_shape.h"

namespace omnib {

struct NetOptions {
  std::string mode_text = "loopback";  // loopback | emulate
  std::string link_rate_text = "10gbit";
  std::string link_delay_text = "0";

  // Derived by validate_net_options().
  bool emulate = false;
  LinkShape link;

  // Set by bind_net_options(), to tell given values from defaults.
  const CLI::Option* rate_option = nullptr;
  const CLI::Option* delay_option = nullptr;
};

void bind_net_options(CLI::App& cmd, NetOptions& o);

// Checks the values and fills the derived fields; `world` is the number of
// ranks the run will have (an emulated cluster holds at most 253).
Status validate_net_options(NetOptions& o, int world);

// The configuration block's fields: net, and under emulation link_rate,
// link_rate_bps, link_delay, link_delay_us.
nlohmann::json net_configuration(const NetOptions& o);

}  // namespace omnib

// The network options a benchmark command takes: --net, --link-rate,
// --link-delay, --tcp-cc, --tcp-idle-restart: their CLI binding and checks (RunConfig records them).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "engine/base/status.h"
#include "tools/config/link_shape.h"
#include "tools/net/rank_tcp.h"

namespace omnib {

struct NetOptions {
  std::string mode_text = "loopback";  // loopback | emulate
  std::string link_rate_text = "10gbit";
  std::string link_delay_text = "0";
  std::string tcp_cc_text = "host";  // the ranks' TCP congestion control; host: this host's default
  std::string idle_restart_text = "off";  // the ranks' slow start after idle (rank_tcp.h says why off)

  // Derived by validate_net_options().
  bool emulate = false;
  LinkShape link;
  RankTcp tcp;  // under emulation: what the ranks' TCP runs (congestion control resolved by name)

  // Set by bind_net_options(), to tell given values from defaults.
  const CLI::Option* rate_option = nullptr;
  const CLI::Option* delay_option = nullptr;
  const CLI::Option* tcp_cc_option = nullptr;
  const CLI::Option* idle_restart_option = nullptr;

  // The first option that sets the ranks' TCP (--tcp-cc, --tcp-idle-restart)
  // given on the command line; null when none was.
  const CLI::Option* given_tcp_option() const;
};

void bind_net_options(CLI::App& cmd, NetOptions& o);

// Checks the values and fills the derived fields; `world` is the number of
// ranks the run will have (an emulated cluster holds at most 253). Under
// emulation it reads which TCP congestion controls this kernel has.
Status validate_net_options(NetOptions& o, int world);

}  // namespace omnib

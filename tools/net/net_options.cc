#include "tools/net/net_options.h"

#include "tools/net/net_plan.h"
#include "tools/net/tcp_congestion.h"

namespace omnib {

void bind_net_options(CLI::App& cmd, NetOptions& o) {
  cmd.add_option("--net", o.mode_text,
                 "loopback, or emulate: each rank in its own network namespace behind a shaped link "
                 "(needs root; docs/emulation.md)")
      ->capture_default_str()
      ->group("Network");
  o.rate_option = cmd.add_option("--link-rate", o.link_rate_text,
                                 "with --net emulate: rate of every link, each direction, tc-style (100mbit, 1gbit, "
                                 "2.5gbit)")
                      ->capture_default_str()
                      ->group("Network");
  o.delay_option = cmd.add_option("--link-delay", o.link_delay_text,
                                  "with --net emulate: one-way delay of every link, each direction (0, 5us, 50us, "
                                  "1ms; needs sch_netem)")
                       ->capture_default_str()
                       ->group("Network");
  o.tcp_cc_option = cmd.add_option("--tcp-cc", o.tcp_cc_text,
                                   "with --net emulate: the ranks' TCP congestion control (cubic, bbr, reno, ...: one "
                                   "this kernel has loaded), or host for this host's default; recorded as tcp_cc")
                        ->capture_default_str()
                        ->group("Network");
  o.idle_restart_option =
      cmd.add_option("--tcp-idle-restart", o.idle_restart_text,
                     "with --net emulate: on lets the ranks' TCP restart from slow start after an idle spell "
                     "(the kernel's default); off, the default here, keeps interleaved algorithms from slowing "
                     "each other; recorded as tcp_idle_restart")
          ->check(CLI::IsMember({"on", "off"}))
          ->capture_default_str()
          ->group("Network");
}

const CLI::Option* NetOptions::given_tcp_option() const {
  for (const CLI::Option* option : {tcp_cc_option, idle_restart_option})
    if (option && option->count() > 0) return option;
  return nullptr;
}

Status validate_net_options(NetOptions& o, int world) {
  if (o.mode_text == "loopback") {
    o.emulate = false;
  } else if (o.mode_text == "emulate") {
    o.emulate = true;
  } else {
    return usage_error("--net '" + o.mode_text + "' is not known: use loopback or emulate");
  }
  auto rate = parse_link_rate(o.link_rate_text);
  if (!rate.is_ok()) return rate.status();
  auto delay = parse_link_delay(o.link_delay_text);
  if (!delay.is_ok()) return delay.status();
  o.link.rate_bps = rate.value();
  o.link.delay = delay.value();
  const bool shape_given =
      (o.rate_option && o.rate_option->count() > 0) || (o.delay_option && o.delay_option->count() > 0);
  if (!o.emulate && shape_given)
    return usage_error("--link-rate and --link-delay shape emulated links: add --net emulate (loopback is not shaped)");
  if (const CLI::Option* tcp_option = o.given_tcp_option(); tcp_option && !o.emulate)
    return usage_error(tcp_option->get_name() +
                       " sets the TCP of emulated ranks: add --net emulate (loopback ranks share this host's TCP "
                       "settings)");
  if (o.emulate && world > kMaxEmulatedRanks)
    return usage_error("--net emulate holds at most " + std::to_string(kMaxEmulatedRanks) +
                       " ranks, but --nodes plus " + "--aggregators is " + std::to_string(world) + ": use fewer");
  o.tcp = RankTcp{};
  if (o.emulate) {
    auto cc = resolve_tcp_congestion(o.tcp_cc_text);
    if (!cc.is_ok()) return cc.status();
    o.tcp.congestion = cc.take();
    o.tcp.idle_restart = o.idle_restart_text == "on";
  }
  return Status::ok();
}

}  // namespace omnib

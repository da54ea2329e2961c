// Which of Gloo's transports the gloo-* baselines take (needs no Gloo).
#include <gtest/gtest.h>

#include "baselines/gloo/gloo_catalog.h"

namespace omnib {
namespace {

TEST(GlooTransport, IbverbsOnlyWithFabricAndAVerbsDevice) {
  const TransportChoice tcp, fabric{TransportChoice::Kind::kFabric, "verbs;ofi_rxm"};
  EXPECT_FALSE(choose_gloo_transport(tcp, {"mlx5_0"}).ibverbs);
  EXPECT_FALSE(choose_gloo_transport(fabric, {}).ibverbs);
  const GlooTransport verbs = choose_gloo_transport(fabric, {"mlx5_0", "mlx5_1"});
  EXPECT_TRUE(verbs.ibverbs);
  EXPECT_EQ(verbs.device, "mlx5_0");
  EXPECT_EQ(verbs.name(), "Gloo ibverbs transport (mlx5_0)");
  EXPECT_EQ(choose_gloo_transport(fabric, {}).name(), "Gloo TCP transport");
}

}  // namespace
}  // namespace omnib

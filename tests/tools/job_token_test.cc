// The job secret: how it is read, and what its proofs bind.
#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/auth/job_token.h"
#include "tools/launch/launch_env.h"
#include "tools/launch/rank_rendezvous.h"

namespace omnib {
namespace {

const char* kHex = "00112233445566778899aabbccddeeff";

TEST(JobToken, ParsesExactly32HexDigitsAndNamesTheFix) {
  auto t = JobToken::parse_hex("00112233445566778899AABBCCDDEEFF", "OMNIB_JOB_TOKEN");
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t.value().hex(), kHex);
  EXPECT_TRUE(t.value().is_secret());
  for (const char* bad : {"0011", "00112233445566778899aabbccddeeff00", "00112233445566778899aabbccddeefg",
                          "00000000000000000000000000000000", ""}) {
    auto b = JobToken::parse_hex(bad, "OMNIB_JOB_TOKEN");
    EXPECT_EQ(b.status().code(), Code::kUsage) << bad;
    EXPECT_NE(b.status().message().find("OMNIB_JOB_TOKEN"), std::string::npos);
    EXPECT_NE(b.status().message().find("openssl rand -hex 16"), std::string::npos);
  }
  EXPECT_FALSE(JobToken::unauthenticated().is_secret());
}

TEST(JobToken, RandomTokensDiffer) {
  EXPECT_NE(JobToken::random().value().hex(), JobToken::random().value().hex());
  EXPECT_NE(random_nonce().value(), random_nonce().value());
}

TEST(JobToken, AProofBindsTheTokenTheLabelAndEveryPart) {
  const JobToken a = JobToken::parse_hex(kHex, "t").value();
  const JobToken b = JobToken::parse_hex("ffeeddccbbaa99887766554433221100", "t").value();
  const Mac mac = a.prove("label", {"one", "two"});
  EXPECT_TRUE(a.verify(mac, "label", {"one", "two"}));
  EXPECT_FALSE(b.verify(mac, "label", {"one", "two"}));
  EXPECT_FALSE(JobToken::unauthenticated().verify(mac, "label", {"one", "two"}));
  EXPECT_FALSE(a.verify(mac, "other", {"one", "two"}));
  EXPECT_FALSE(a.verify(mac, "label", {"one", "twO"}));
  EXPECT_FALSE(a.verify(mac, "label", {"two", "one"}));
  // The label's length is bound too: no label/part split is the same message.
  EXPECT_FALSE(a.verify(mac, "labelone", {"two"}));
}

class LaunchEnvToken : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("RANK", "1", 1);
    setenv("WORLD_SIZE", "2", 1);
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    setenv("MASTER_PORT", "29999", 1);
  }
  void TearDown() override {
    for (const char* v : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "OMNIB_JOB_TOKEN"}) unsetenv(v);
  }
};

TEST_F(LaunchEnvToken, AnExportedTokenAuthenticatesTheRun) {
  setenv("OMNIB_JOB_TOKEN", kHex, 1);
  auto env = detect_launch_env();
  ASSERT_TRUE(env.is_ok() && env.value().has_value());
  ASSERT_TRUE(env.value()->token.has_value());
  EXPECT_EQ(env.value()->token->hex(), kHex);
  EXPECT_EQ(rendezvous_mode(*env.value()), "authenticated");
}

TEST_F(LaunchEnvToken, WithoutATokenTheRunIsUnauthenticated) {
  auto env = detect_launch_env();
  ASSERT_TRUE(env.is_ok() && env.value().has_value());
  EXPECT_FALSE(env.value()->token.has_value());
  EXPECT_EQ(rendezvous_mode(*env.value()), "unauthenticated");
}

TEST_F(LaunchEnvToken, AMalformedTokenIsAUsageError) {
  setenv("OMNIB_JOB_TOKEN", "secret", 1);
  EXPECT_EQ(detect_launch_env().status().code(), Code::kUsage);
}

TEST_F(LaunchEnvToken, TimeoutsThatOverflowAreRefused) {
  auto env = detect_launch_env();
  ASSERT_TRUE(env.is_ok());
  for (int64_t t : {int64_t{0}, int64_t{2147484}, kMaxWaitTimeout.count() + 1}) {
    auto met = rendezvous_rank(*env.value(), t);
    EXPECT_EQ(met.status().code(), Code::kUsage) << t;
    EXPECT_NE(met.status().message().find("--timeout"), std::string::npos);
  }
}

// A rank the local launcher started learns the launcher's process id, so
// that rank 0 can report the store's process in the resources block.
class LocalLaunchEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("OMNI_BENCH_RANK", "0", 1);
    setenv("OMNI_BENCH_WORLD_SIZE", "2", 1);
    setenv("OMNI_BENCH_STORE", "127.0.0.1:29999", 1);
  }
  void TearDown() override {
    for (const char* v : {"OMNI_BENCH_RANK", "OMNI_BENCH_WORLD_SIZE", "OMNI_BENCH_STORE", "OMNI_BENCH_LAUNCHER_PID"})
      unsetenv(v);
  }
};

TEST_F(LocalLaunchEnv, TheLauncherPidIsReadAndCheckedIfGiven) {
  EXPECT_EQ(detect_launch_env().value()->launcher_pid, 0);
  setenv("OMNI_BENCH_LAUNCHER_PID", "4242", 1);
  EXPECT_EQ(detect_launch_env().value()->launcher_pid, 4242);
  for (const char* bad : {"0", "-3", "12x", "99999999999"}) {
    setenv("OMNI_BENCH_LAUNCHER_PID", bad, 1);
    auto env = detect_launch_env();
    ASSERT_FALSE(env.is_ok()) << bad;
    EXPECT_EQ(env.status().code(), Code::kUsage);
    EXPECT_NE(env.status().message().find("OMNI_BENCH_LAUNCHER_PID"), std::string::npos) << env.status().message();
  }
}

}  // namespace
}  // namespace omnib

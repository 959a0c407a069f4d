// A container's CPU limit, as its cgroup files say it: the event loop does not spin where the
// process may use one whole CPU or less. The trees here are written into a temporary directory
// as the kernel lays them out.
#include "core/cpu_limit.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace deadbolt::detail {
namespace {

namespace fs = std::filesystem;

class CgroupTree : public ::testing::Test {
  protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("deadbolt-cgroup-" + std::to_string(::getpid()));
        fs::remove_all(root_);
    }
    void TearDown() override { fs::remove_all(root_); }
    // Writes text into the file at root/rel, making its directories.
    void put(const std::string& rel, const std::string& text) {
        fs::create_directories((root_ / rel).parent_path());
        std::ofstream(root_ / rel) << text;
    }
    std::optional<double> limit(const std::string& proc_self_cgroup) {
        return cgroup_cpu_limit(proc_self_cgroup, root_.string());
    }
    fs::path root_;
};

TEST(CpuLimit, ReadsCgroupV2sCpuMax) {
    EXPECT_EQ(cpus_of_cpu_max("50000 100000\n"), 0.5);
    EXPECT_EQ(cpus_of_cpu_max("200000 100000"), 2.0);
    EXPECT_EQ(cpus_of_cpu_max("max 100000\n"), std::nullopt);
    EXPECT_EQ(cpus_of_cpu_max(""), std::nullopt);
    EXPECT_EQ(cpus_of_cpu_max("garbage"), std::nullopt);
    EXPECT_EQ(cpus_of_cpu_max("100000 0"), std::nullopt);
}

TEST(CpuLimit, ReadsCgroupV1sCfsQuota) {
    EXPECT_EQ(cpus_of_cfs("150000\n", "100000\n"), 1.5);
    EXPECT_EQ(cpus_of_cfs("-1\n", "100000\n"), std::nullopt);
    EXPECT_EQ(cpus_of_cfs("", "100000"), std::nullopt);
}

TEST_F(CgroupTree, V2TakesTheLeastLimitOfTheGroupAndItsParents) {
    put("cpu.max", "max 100000\n");
    put("kubepods/cpu.max", "400000 100000\n");
    put("kubepods/pod1/cpu.max", "100000 100000\n");
    put("kubepods/pod1/app/cpu.max", "max 100000\n");
    EXPECT_EQ(limit("0::/kubepods/pod1/app\n"), 1.0);
    EXPECT_EQ(limit("0::/kubepods\n"), 4.0);
}

TEST_F(CgroupTree, V2WithoutALimitAnywhereHasNone) {
    put("cpu.max", "max 100000\n");
    put("user.slice/cpu.max", "max 100000\n");
    EXPECT_EQ(limit("0::/user.slice\n"), std::nullopt);
}

TEST_F(CgroupTree, AGroupNotUnderTheRootIsReadFromItsNearestParentThere) {
    // A container without its own cgroup namespace: its group's files are mounted as the root.
    put("cpu.max", "50000 100000\n");
    EXPECT_EQ(limit("0::/docker/0123abcd\n"), 0.5);
}

TEST_F(CgroupTree, V2InItsOwnNamespaceReadsTheRoot) {
    put("cpu.max", "150000 100000\n");
    EXPECT_EQ(limit("0::/\n"), 1.5);
}

TEST_F(CgroupTree, AGroupOutsideTheNamespaceIsReadAtTheMountNotAboveIt) {
    put("mnt/cpu.max", "100000 100000\n");
    put("cpu.max", "10000 100000\n");  // above the mount: never read
    EXPECT_EQ(cgroup_cpu_limit("0::/../other\n", (root_ / "mnt").string()), 1.0);
}

TEST_F(CgroupTree, V1sCpuControllerWinsOnAHybridMachine) {
    put("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    put("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    put("cpu,cpuacct/job/cpu.cfs_quota_us", "100000\n");
    put("cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
    put("cpu.max", "50000 100000\n");  // v2's, at the root: not the cpu controller here
    EXPECT_EQ(limit("12:memory:/job\n3:cpu,cpuacct:/job\n0::/job\n"), 1.0);
}

TEST_F(CgroupTree, V1IsFoundUnderEachNameItsMountHas) {
    for (const std::string mount : {"cpu", "cpuacct,cpu"}) {
        fs::remove_all(root_);
        put(mount + "/cpu.cfs_quota_us", "200000\n");
        put(mount + "/cpu.cfs_period_us", "100000\n");
        // The group is not under the mount (no cgroup namespace): its nearest parent there.
        EXPECT_EQ(limit("4:cpu,cpuacct:/docker/0123abcd\n"), 2.0) << mount;
    }
}

TEST(CpuLimit, OnlyWholeCpusUnderTheLimitCount) {
    EXPECT_EQ(whole_cpus(2, 1.5), 1u);  // the event loop does not spin
    EXPECT_EQ(whole_cpus(2, 2.0), 2u);
    EXPECT_EQ(whole_cpus(8, std::nullopt), 8u);
    EXPECT_EQ(whole_cpus(2, 1e12), 2u);  // more CPUs than an unsigned holds
    EXPECT_EQ(whole_cpus(4, 0.2), 1u);
    EXPECT_EQ(whole_cpus(0, std::nullopt), 1u);
}

TEST_F(CgroupTree, NoFilesMeanNoLimit) {
    EXPECT_EQ(limit("1:cpu:/x\n0::/x\n"), std::nullopt);
    EXPECT_EQ(limit(""), std::nullopt);
    EXPECT_EQ(limit("not a cgroup file"), std::nullopt);
}

}  // namespace
}  // namespace deadbolt::detail

// How much CPU time a process's cgroup lets it use (a container's CPU limit, Kubernetes's
// `resources.limits.cpu`), read from the cgroup files: the event loop spins for replies only
// where a whole CPU is spare, and a quota of one CPU on a machine of many is one CPU to it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace deadbolt::detail {

/// The CPUs a cgroup v2 `cpu.max` text allows ("50000 100000" is half a CPU); nullopt for "max"
/// (no limit) or text that is not that file's.
std::optional<double> cpus_of_cpu_max(std::string_view text);

/// The CPUs cgroup v1's `cpu.cfs_quota_us` and `cpu.cfs_period_us` allow; nullopt for a quota
/// of -1 (no limit) or text that is not those files'.
std::optional<double> cpus_of_cfs(std::string_view quota, std::string_view period);

/// The least CPU any cgroup holding this process allows, from its /proc/self/cgroup text and the
/// cgroup file systems under fs_root: its own group's limit and every parent's, v1's cpu
/// controller where one is mounted, else v2's. A group that is not under fs_root (a container
/// that sees its own group as the root) is read from the nearest parent there. nullopt when no
/// group sets a limit or none can be read.
std::optional<double> cgroup_cpu_limit(std::string_view proc_self_cgroup,
                                       const std::string& fs_root = "/sys/fs/cgroup");

/// cgroup_cpu_limit of this process, read now.
std::optional<double> this_process_cpu_limit();

/// The CPUs a thread with `affinity` CPUs may use whole under a cgroup limit: the lesser of the
/// two, a fraction rounded down, at least 1.
unsigned whole_cpus(unsigned affinity, std::optional<double> limit);

}  // namespace deadbolt::detail

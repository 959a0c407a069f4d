#include "core/cpu_limit.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace deadbolt::detail {
namespace {

std::optional<long long> number(std::string_view t) {
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.remove_suffix(1);
    long long v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc{} || end != t.data() + t.size()) return std::nullopt;
    return v;
}

std::optional<double> ratio(std::optional<long long> quota, std::optional<long long> period) {
    if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
    return double(*quota) / double(*period);
}

std::string read_all(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

// The group's own limit, in the files of v1's cpu controller or of v2.
std::optional<double> limit_in(const std::filesystem::path& dir, bool v1) {
    std::error_code ec;
    if (v1) {
        if (!std::filesystem::exists(dir / "cpu.cfs_quota_us", ec)) return std::nullopt;
        return cpus_of_cfs(read_all(dir / "cpu.cfs_quota_us"), read_all(dir / "cpu.cfs_period_us"));
    }
    if (!std::filesystem::exists(dir / "cpu.max", ec)) return std::nullopt;
    return cpus_of_cpu_max(read_all(dir / "cpu.max"));
}

// The least limit from the group at root/path up to root; a path not there starts at its
// nearest parent that is.
std::optional<double> least_up_from(const std::filesystem::path& root, std::string_view path,
                                    bool v1) {
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec)) return std::nullopt;
    std::filesystem::path rel = std::filesystem::path(path).relative_path();
    // "/../x": a group outside this process's cgroup namespace, which it cannot see; the walk
    // must not leave the mount.
    if (std::find(rel.begin(), rel.end(), std::filesystem::path("..")) != rel.end()) rel.clear();
    std::optional<double> least;
    for (;;) {
        const auto dir = root / rel;
        if (std::filesystem::is_directory(dir, ec))
            if (auto l = limit_in(dir, v1)) least = least ? std::min(*least, *l) : *l;
        if (rel.empty()) break;
        rel = rel.parent_path();
    }
    return least;
}

}  // namespace

std::optional<double> cpus_of_cpu_max(std::string_view text) {
    const auto sp = text.find(' ');
    if (sp == std::string_view::npos) return std::nullopt;
    return ratio(number(text.substr(0, sp)), number(text.substr(sp + 1)));
}

std::optional<double> cpus_of_cfs(std::string_view quota, std::string_view period) {
    return ratio(number(quota), number(period));
}

std::optional<double> cgroup_cpu_limit(std::string_view proc_self_cgroup,
                                       const std::string& fs_root) {
    // Lines "id:controllers:path"; v2's is "0::path". A hybrid machine lists both, and its cpu
    // controller is v1's.
    std::optional<std::string_view> v1_path, v2_path;
    while (!proc_self_cgroup.empty()) {
        auto eol = std::min(proc_self_cgroup.find('\n'), proc_self_cgroup.size());
        std::string_view line = proc_self_cgroup.substr(0, eol);
        proc_self_cgroup.remove_prefix(std::min(eol + 1, proc_self_cgroup.size()));
        auto c1 = line.find(':'), c2 = line.find(':', c1 == line.npos ? line.npos : c1 + 1);
        if (c1 == line.npos || c2 == line.npos) continue;
        std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
        if (line.substr(0, c1) == "0" && controllers.empty()) v2_path = path;
        for (std::string_view rest = controllers; !rest.empty();) {
            auto comma = std::min(rest.find(','), rest.size());
            if (rest.substr(0, comma) == "cpu") v1_path = path;
            rest.remove_prefix(std::min(comma + 1, rest.size()));
        }
    }
    if (v1_path) {
        // Where the v1 cpu controller is mounted: alone, or joined with cpuacct.
        for (const char* mount : {"cpu", "cpu,cpuacct", "cpuacct,cpu"})
            if (auto l = least_up_from(std::filesystem::path(fs_root) / mount, *v1_path, true))
                return l;
        return std::nullopt;
    }
    if (v2_path) return least_up_from(fs_root, *v2_path, false);
    return std::nullopt;
}

std::optional<double> this_process_cpu_limit() {
    return cgroup_cpu_limit(read_all("/proc/self/cgroup"));
}

unsigned whole_cpus(unsigned affinity, std::optional<double> limit) {
    // Compared as doubles: a quota may stand for more CPUs than an unsigned holds.
    if (limit && *limit < double(affinity)) affinity = static_cast<unsigned>(*limit);
    return std::max(1U, affinity);
}

}  // namespace deadbolt::detail

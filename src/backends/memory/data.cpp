// Fenced data and writes checked against a holding, in a memory space: values beside the
// locks, written in the same step as the check, as the real engines' scripts do.
#include <fmt/format.h>

#include <charconv>

#include "backends/memory/holding.hpp"
#include "backends/memory/store.hpp"

namespace deadbolt::detail {

Status MemoryStore::fenced_get(std::string_view k, FencedValue& out) {
    return call([&](MemorySpace::Turn& t) {
        out = {};
        if (auto it = t.state().fenced.find(key(k)); it != t.state().fenced.end()) {
            out.value = it->second.value;
            out.version = it->second.version;
        }
        return Status{};
    });
}

Status MemoryStore::fenced_write(std::string_view k, std::string_view value, std::uint64_t fence,
                                 std::string_view version, FencedResult& out) {
    std::uint64_t expected = 0;
    if (!version.empty()) {
        auto [p, ec] = std::from_chars(version.data(), version.data() + version.size(), expected);
        if (ec != std::errc{} || p != version.data() + version.size())
            return Status::error(errc::invalid_argument,
                                 fmt::format("'{}' is not a version fenced_get returned", version));
    }
    return call([&](MemorySpace::Turn& t) {
        MemFenced& d = t.state().fenced[key(k)];
        out = {};
        out.stale_fence = fence < d.highest;
        out.accepted = !out.stale_fence && (version.empty() || expected == d.version);
        if (out.accepted) {
            d.value = std::string(value);
            ++d.version;
            d.highest = fence;
        }
        out.highest = d.highest;
        out.version = d.version;
        return Status{};
    });
}

Status MemoryStore::put_if_held(const Holding& h, std::string_view k, std::string_view value,
                                Clock::time_point by, bool& put) {
    put = false;
    MemorySpace::Turn t(*space_, by, memory::Call::other);
    if (!t.status().ok()) return t.status();
    put = holds(t.state(), static_cast<const MemHolding&>(h), t.now());
    if (put) t.state().values[key(k)] = std::string(value);
    return t.answer();
}

}  // namespace deadbolt::detail

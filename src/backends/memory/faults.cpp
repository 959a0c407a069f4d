// memory::Space: a test's handle on a memory space, its clock and its faults.
#include <fmt/format.h>

#include "backends/memory/space.hpp"
#include "backends/memory/url.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/memory.hpp"

namespace deadbolt::memory {

Space::Space(std::string_view name) {
    if (auto e = detail::memory_name_error(name); !e.empty())
        throw UsageError(make_error_code(errc::invalid_argument), e);
    s_ = detail::MemorySpace::named(std::string(name));
}

int Space::lose(std::string_view name) noexcept {
    try {
        return s_->lose(std::string(name));
    } catch (const std::exception&) {
        return 0;  // out of memory for the name's copy
    }
}

int Space::lose_all() noexcept {
    return s_->lose_all();
}

void Space::lose_replies(int n, Call which) noexcept {
    s_->lose_replies(n, which);
}

void Space::stall() noexcept {
    s_->stall(true);
}

void Space::resume() noexcept {
    s_->stall(false);
}

void Space::advance(std::chrono::milliseconds d) {
    if (d.count() < 0)
        throw UsageError(
            make_error_code(errc::invalid_argument),
            fmt::format("memory::Space::advance({} ms): a clock only moves forward", d.count()));
    s_->advance(d);
}

std::chrono::steady_clock::time_point Space::now() const noexcept {
    return s_->now();
}

std::optional<std::string> Space::value(std::string_view key) const {
    return s_->value(std::string(key));
}

const std::string& Space::name() const noexcept {
    return s_->name();
}

}  // namespace deadbolt::memory

#include "seconds.hpp"

#include <cmath>
#include <string>

#include "deadbolt/error.hpp"

namespace deadbolt::python {

std::chrono::milliseconds to_ms(double seconds, const char* what) {
    // A century bounds what fits in the int64 milliseconds and every deadline computed from it.
    constexpr double kMost = 100.0 * 365 * 24 * 3600;
    if (!std::isfinite(seconds) || seconds < 0 || seconds > kMost)
        throw_error(make_error_code(errc::invalid_argument),
                    std::string(what) + " must be a number of seconds from 0 to 100 years, not " +
                        std::to_string(seconds));
    return std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000)));
}

std::optional<std::chrono::steady_clock::time_point> deadline_in(std::optional<double> timeout) {
    if (!timeout) return std::nullopt;
    return std::chrono::steady_clock::now() + to_ms(*timeout, "timeout");
}

AcquireOptions waiting(std::optional<std::chrono::steady_clock::time_point> deadline,
                       std::stop_token token) {
    AcquireOptions how;
    how.deadline = deadline;
    how.cancel = std::move(token);
    return how;
}

}  // namespace deadbolt::python

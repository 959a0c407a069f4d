// Status: an error code plus the detail that names the problem, as every layer returns it.
#pragma once

#include <string>
#include <system_error>

#include "deadbolt/error.hpp"

namespace deadbolt::detail {

struct Status {
    std::error_code ec;
    std::string detail;

    bool ok() const { return !ec; }
    static Status error(errc e, std::string detail) {
        return {make_error_code(e), std::move(detail)};
    }
    /// What names the problem: the detail, else the code's own text; empty when ok.
    std::string message() const { return detail.empty() && ec ? ec.message() : detail; }
    /// Throws the matching deadbolt exception when not ok.
    void throw_if_error() const {
        if (ec) throw_error(ec, message());
    }
};

}  // namespace deadbolt::detail

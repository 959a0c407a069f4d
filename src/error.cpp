#include "deadbolt/error.hpp"

#include <iterator>

namespace deadbolt {
namespace {

class Category : public std::error_category {
  public:
    const char* name() const noexcept override { return "deadbolt"; }
    std::string message(int v) const override {
        switch (static_cast<errc>(v)) {
            case errc::invalid_argument:
                return "invalid argument: fix the call";
            case errc::invalid_url:
                return "invalid URL or URL option: see the URL forms in README";
            case errc::connect_failed:
                return "cannot connect to the server: is it running and reachable?";
            case errc::connection_lost:
                return "connection lost before the request was sent: retry";
            case errc::timeout:
                return "deadline passed before the request was sent: retry";
            case errc::unknown_outcome:
                return "reply lost after the request was sent: outcome unknown";
            case errc::auth_failed:
                return "authentication failed: check user and password";
            case errc::permission_denied:
                return "the server's ACL denied a command or key";
            case errc::tls_failed:
                return "TLS handshake or certificate verification failed";
            case errc::wrong_type:
                return "a key deadbolt uses holds a value of another type";
            case errc::readonly:
                return "the server is a read-only replica: connect to the primary";
            case errc::out_of_memory:
                return "the server is out of memory (maxmemory reached)";
            case errc::loading:
                return "the server is loading its dataset: retry shortly";
            case errc::busy:
                return "the server is busy running a script: retry shortly";
            case errc::protocol_error:
                return "the server sent a reply that is not valid RESP";
            case errc::server_error:
                return "the server answered with an error";
            case errc::not_acquired:
                return "lock is held by someone else";
            case errc::not_owner:
                return "the lease is no longer held";
            case errc::cancelled:
                return "cancelled by the caller";
            case errc::not_replicated:
                return "too few replicas acknowledged the lock's write in time (sync_replicas)";
            case errc::no_quorum:
                return "fewer than a majority of the Redlock nodes answered in time";
        }
        return "unknown deadbolt error";
    }
};

}  // namespace

const std::error_category& category() noexcept {
    static const Category c;
    return c;
}

std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), category()};
}

bool is_retryable(std::error_code ec) noexcept {
    if (ec.category() != category()) return false;
    switch (static_cast<errc>(ec.value())) {
        case errc::connect_failed:
        case errc::connection_lost:
        case errc::timeout:
        case errc::unknown_outcome:
        case errc::readonly:
        case errc::out_of_memory:
        case errc::loading:
        case errc::busy:
        case errc::protocol_error:
        case errc::not_acquired:
        case errc::not_replicated:
        case errc::no_quorum:
            return true;
        default:
            return false;
    }
}

ErrorClass class_of(std::error_code ec) noexcept {
    if (ec == errc::not_acquired) return ErrorClass::not_acquired;
    if (ec == errc::not_owner) return ErrorClass::lost;
    if (ec == errc::cancelled) return ErrorClass::cancelled;
    switch (kind_of(ec)) {
        case ErrorKind::usage:
            return ErrorClass::usage;
        case ErrorKind::connection:
            return ErrorClass::connection;
        case ErrorKind::server:
            return ErrorClass::server;
        case ErrorKind::lock:
            return ErrorClass::lock;
        case ErrorKind::other:
            break;
    }
    return ErrorClass::other;
}

ErrorKind kind_of(std::error_code ec) noexcept {
    if (ec.category() != category()) return ErrorKind::other;
    switch (static_cast<errc>(ec.value())) {
        case errc::invalid_argument:
        case errc::invalid_url:
            return ErrorKind::usage;
        case errc::connect_failed:
        case errc::connection_lost:
        case errc::timeout:
        case errc::unknown_outcome:
        case errc::tls_failed:
        case errc::protocol_error:
        case errc::no_quorum:
            return ErrorKind::connection;
        case errc::not_acquired:
        case errc::not_owner:
        case errc::cancelled:
        case errc::not_replicated:
            return ErrorKind::lock;
        default:
            return ErrorKind::server;
    }
}

std::string_view code_name(std::error_code ec) noexcept {
    // In errc's order, from invalid_argument (1).
    static constexpr std::string_view names[] = {
        "invalid_argument", "invalid_url",
        "connect_failed",   "connection_lost",
        "timeout",          "unknown_outcome",
        "auth_failed",      "permission_denied",
        "tls_failed",       "wrong_type",
        "readonly",         "out_of_memory",
        "loading",          "busy",
        "protocol_error",   "server_error",
        "not_acquired",     "not_owner",
        "cancelled",        "not_replicated",
        "no_quorum",
    };
    if (ec.category() != category() || ec.value() < 1 ||
        ec.value() > static_cast<int>(std::size(names)))
        return {};
    return names[ec.value() - 1];
}

void throw_error(std::error_code ec, const std::string& what) {
    switch (kind_of(ec)) {
        case ErrorKind::usage:
            throw UsageError(ec, what);
        case ErrorKind::connection:
            throw ConnectionError(ec, what);
        case ErrorKind::lock:
            throw LockError(ec, what);
        case ErrorKind::server:
            throw ServerError(ec, what);
        case ErrorKind::other:
            break;
    }
    throw Error(ec, what);
}

}  // namespace deadbolt

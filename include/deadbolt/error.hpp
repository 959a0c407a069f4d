// Errors: one enum, its std::error_category, and an exception hierarchy over it.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace deadbolt {

/// Every failure deadbolt reports. Each value's comment says whether retrying can help.
enum class errc {
    invalid_argument = 1,  ///< Bad name, TTL or option; not retryable: fix the call.
    invalid_url,           ///< Malformed URL or unknown URL option; not retryable.
    connect_failed,        ///< Server unreachable within the connect timeout; retryable.
    connection_lost,       ///< Connection dropped before the request was sent; retryable.
    timeout,               ///< Deadline passed before the request was sent; retryable.
    unknown_outcome,       ///< Reply lost after the request was sent; it may have happened.
    auth_failed,           ///< Wrong user or password; not retryable.
    permission_denied,     ///< ACL denied a command or key; not retryable.
    tls_failed,            ///< TLS handshake or certificate check failed; not retryable.
    wrong_type,            ///< A key deadbolt uses holds another type; not retryable.
    readonly,              ///< The server is a read-only replica; retryable after failover.
    out_of_memory,         ///< The server hit maxmemory (OOM); retryable once memory frees.
    loading,               ///< The server is loading its dataset; retryable.
    busy,                  ///< The server runs a long script (BUSY); retryable.
    protocol_error,        ///< The server answered something that is not valid RESP; retryable.
    server_error,          ///< Any other server error reply; not retryable.
    not_acquired,          ///< The lock is held by someone else or the wait elapsed; retryable.
    not_owner,       ///< The lease is no longer held (expired, deleted, taken); not retryable.
    cancelled,       ///< The caller's stop token was requested; not retryable.
    not_replicated,  ///< Fewer replicas than sync_replicas acknowledged in time; retryable.
    no_quorum,       ///< Fewer than a majority of Redlock nodes answered in time; retryable.
};

/// The category of deadbolt::errc; its messages say what went wrong and what to do.
const std::error_category& category() noexcept;

/// Wraps an errc in a std::error_code of deadbolt's category.
std::error_code make_error_code(errc e) noexcept;

/// True when the same call may succeed if repeated later (see each errc).
bool is_retryable(std::error_code ec) noexcept;

/// Base of every exception deadbolt throws: the code plus a message naming the problem.
class Error : public std::system_error {
  public:
    Error(std::error_code ec, const std::string& what) : std::system_error(ec, what), what_(what) {}
    /// The message naming the problem and what to do (without the generic category text).
    const char* what() const noexcept override { return what_.c_str(); }
    /// Whether repeating the call can help.
    bool retryable() const noexcept { return is_retryable(code()); }

  private:
    std::string what_;
};

/// The call itself was wrong (invalid_argument, invalid_url): fix the input.
class UsageError : public Error {
    using Error::Error;
};
/// The server could not be reached or the reply was lost (connect_failed, timeout, ...).
class ConnectionError : public Error {
    using Error::Error;
};
/// The server answered with an error (auth, ACL, wrong type, readonly, OOM, ...).
class ServerError : public Error {
    using Error::Error;
};
/// The lock was not obtained or is no longer held (not_acquired, not_owner, cancelled).
class LockError : public Error {
    using Error::Error;
};

/// Which of the exception classes above reports a code; other for a code of another category.
enum class ErrorKind { usage, connection, server, lock, other };
/// The class that throw_error throws for ec. Never throws.
ErrorKind kind_of(std::error_code ec) noexcept;
/// The error classes the language bindings raise: a code's own where it has one (not_acquired,
/// not_owner as lost, cancelled), else its kind's.
enum class ErrorClass { not_acquired, lost, cancelled, usage, connection, server, lock, other };
/// The binding's class for ec. Never throws.
ErrorClass class_of(std::error_code ec) noexcept;
/// errc's identifier for ec ("not_acquired"), as the language bindings name codes; empty for
/// a code of another category. Never throws.
std::string_view code_name(std::error_code ec) noexcept;
/// Throws the exception class that matches ec's value, carrying what.
[[noreturn]] void throw_error(std::error_code ec, const std::string& what);

}  // namespace deadbolt

template <>
struct std::is_error_code_enum<deadbolt::errc> : std::true_type {};

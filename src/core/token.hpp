// Owner tokens: "host:pid:" and 128 bits from the OS CSPRNG as 32 hex digits. The random part
// alone makes a token unguessable; host and pid let `status` say who holds a lock without a
// second key on the hot path (a redis-py lock still sees one string under the name).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace deadbolt::detail {

/// A fresh token naming this host and process. Throws std::runtime_error when the OS has no
/// randomness to give.
std::string random_token();

/// Where a token deadbolt made was made.
struct TokenOrigin {
    std::string host;
    int pid = 0;
};

/// The host and pid of a token random_token made (a reentrant owner's thread suffix allowed);
/// nullopt for anything else (a redis-py token, an owner name the application chose).
std::optional<TokenOrigin> token_origin(std::string_view token);
/// The host and pid this process's tokens name (what a holding says it comes from); empty
/// when no randomness can be had. Never throws.
std::optional<TokenOrigin> this_origin() noexcept;

}  // namespace deadbolt::detail

// Owner tokens: 128 bits from the OS CSPRNG, as 32 hex digits. Never from time or PID.
#pragma once

#include <string>

namespace deadbolt::detail {

std::string random_token();

}  // namespace deadbolt::detail

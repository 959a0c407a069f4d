// The Redis ACL rules deadbolt needs, for operators who give it a user of its own.
#pragma once

#include <string>
#include <string_view>

namespace deadbolt {

/// The `ACL SETUSER` command that grants user exactly what deadbolt uses on one server or a
/// Sentinel's primary: the commands of every script and of the client, the lock keys and
/// auxiliary keys under prefix, and their channels (">PASSWORD" stands for the password).
/// Never throws but std::bad_alloc.
std::string acl_setuser_command(std::string_view user, std::string_view prefix);

}  // namespace deadbolt

// deadbolt acl: prints the ACL SETUSER line that grants a user exactly what deadbolt needs.
#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"

namespace deadbolt::cli {

void add_acl_command(CLI::App& app, AclArgs& a) {
    auto* cmd = app.add_subcommand(
        "acl", "Print the Redis ACL SETUSER command that grants exactly what deadbolt needs");
    cmd->add_option("--user", a.user, "ACL user name (default deadbolt)");
    cmd->add_option("--prefix", a.prefix,
                    "Key prefix the clients use (the URL's prefix=); default: none (every key)");
    cmd->footer(
        "Replace >PASSWORD with the user's password. Example:\n"
        "  deadbolt acl --user locker --prefix app: | sed 's/>PASSWORD/>s3cret/' | redis-cli\n");
}

int acl_command(const AclArgs& a) {
    fmt::print("{}\n", acl_setuser_command(a.user, a.prefix));
    return kOk;
}

}  // namespace deadbolt::cli

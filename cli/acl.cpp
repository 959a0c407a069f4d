// deadbolt acl: prints the ACL SETUSER line that grants a user exactly what deadbolt needs.
#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "engines.hpp"

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
    std::string line;
#ifdef DEADBOLT_CLI_LOADS_ENGINES  // the Redis library is loaded now, and the rules found in it
    using Rules = void (*)(const char*, const char*, std::string*);
    auto* rules = reinterpret_cast<Rules>(engine_symbol("redis", "deadbolt_redis_acl_setuser"));
    if (rules == nullptr) throw UsageProblem("this build's Redis library has no ACL rules");
    rules(a.user.c_str(), a.prefix.c_str(), &line);
#else
    line = acl_setuser_command(a.user, a.prefix);
#endif
    fmt::print("{}\n", line);
    return kOk;
}

}  // namespace deadbolt::cli

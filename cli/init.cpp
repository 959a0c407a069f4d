// deadbolt init: makes what deadbolt keeps on the server now, as a user who may (a database's
// schema: its sequence, tables and functions), so that the users who take locks need no
// right to create anything. Other engines need nothing made: it checks they answer.
#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"

namespace deadbolt::cli {

void add_init_command(CLI::App& app, InitArgs& a) {
    auto* cmd = app.add_subcommand(
        "init", "Make what deadbolt keeps on the server (a PostgreSQL schema, MariaDB tables) now");
    add_url_option(*cmd, a.url);
    cmd->footer(std::string("Run it once as a user who may create them; then grant the users who "
                            "take locks the rights its error messages name.\nExamples:\n  "
                            "deadbolt init --url postgresql://owner@db/app?schema=locks\n  "
                            "deadbolt init --url mysql://owner@db:3306/app\n") +
                kExitCodesHelp);
}

int init_command(const InitArgs& a) {
    // Connecting makes a database's schema when it is missing or of another layout, and
    // fails saying what is missing when this user may not.
    auto client = connect(a.url);
    client.ping();
    fmt::print("ready: what deadbolt keeps exists on the server\n");
    return kOk;
}

}  // namespace deadbolt::cli

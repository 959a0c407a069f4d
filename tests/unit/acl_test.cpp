#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>

#include "backends/redis/acl.hpp"

using namespace deadbolt::detail;

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

// The 1-based line of source holding text.
int line_of(const std::string& source, const std::string& text) {
    auto before = std::string_view(source).substr(0, source.find(text));
    return 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
}

}  // namespace

TEST(AclGrants, CommandsAreReadFromTheScripts) {
    EXPECT_EQ(script_commands("redis.call('GET', k) redis.pcall('set', k, v) redis.call('GET')"),
              (std::vector<std::string>{"GET", "SET"}));
    auto all = acl_commands();
    for (const Script* s : all_scripts())
        for (const auto& c : script_commands(s->source)) EXPECT_TRUE(has(all, c)) << c;
    for (const char* c : {"EVALSHA", "EVAL", "TIME", "PUBLISH", "SUBSCRIBE", "PING"})
        EXPECT_TRUE(has(all, c)) << c;
    EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
}

TEST(AclGrants, TheGrantCoversAuxiliaryKeysAndChannelsUnderThePrefix) {
    auto line = acl_setuser("locker", "app:");
    for (const char* part :
         {"ACL SETUSER locker on >PASSWORD resetchannels", " ~app:* ", " ~{app:* ", " ~{s*}app:* ",
          " &{app:* ", " -@all ", " +time", " +evalsha"})
        EXPECT_NE(line.find(part), std::string::npos) << part << " in " << line;
    EXPECT_NE(acl_setuser("u", "").find(" ~* &* "), std::string::npos);
}

TEST(AclGrants, AScriptErrorNamesTheRefusedCommandByItsLine) {
    const Script& s = acquire_script();
    std::string err =
        "ERR The user executing the script can't run this command or subcommand "
        "script: " +
        s.sha1 + ", on @user_script:" + std::to_string(line_of(s.source, "redis.call('TIME')")) +
        ".";
    EXPECT_EQ(refused_command(err), "TIME");
    EXPECT_EQ(refused_command("ERR something else"), "");
    EXPECT_EQ(refused_command("ERR ... script: " + std::string(40, 'f') + ", on @user_script:3."),
              "");
}

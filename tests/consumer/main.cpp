// Uses the installed headers and libraries: a bad URL must be a UsageError; "--forms" prints
// the URL forms of the engines linked in (the registry), one per line; a server URL given as
// argv[1] must lock and unlock a Mutex.
#include <deadbolt/deadbolt.hpp>

#include <cstdio>
#include <mutex>
#include <string_view>

int main(int argc, char** argv) {
    try {
        deadbolt::Client::connect("not a url");
        return 1;
    } catch (const deadbolt::UsageError&) {
    }
    if (argc > 1 && std::string_view(argv[1]) == "--forms") {
        for (const auto& form : deadbolt::Client::url_forms()) std::printf("%s\n", form.c_str());
    } else if (argc > 1) {
        auto client = deadbolt::Client::connect(argv[1]);
        auto m = client.mutex("consumer");
        std::lock_guard lk(m);
        std::printf("fence %llu\n", static_cast<unsigned long long>(m.lease().fence()));
    }
    return 0;
}

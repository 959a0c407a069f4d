// Uses the installed headers and library: a bad URL must be a UsageError, and with a server
// URL given as argv[1], a lock round trip must work.
#include <deadbolt/deadbolt.hpp>

#include <cstdio>
#include <mutex>

int main(int argc, char** argv) {
    try {
        deadbolt::Client::connect("not a url");
        return 1;
    } catch (const deadbolt::UsageError&) {
    }
    if (argc > 1) {
        auto client = deadbolt::Client::connect(argv[1]);
        auto m = client.mutex("consumer");
        std::lock_guard lk(m);
        std::printf("fence %llu\n", static_cast<unsigned long long>(m.lease().fence()));
    }
    return 0;
}

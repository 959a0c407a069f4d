// Certs: a throwaway CA, a server certificate for localhost/127.0.0.1 and a client
// certificate, made by openssl in a directory of the caller's, for the TLS tests.
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>

#include "redis_server.hpp"  // run_command

namespace deadbolt::test {

struct Certs {
    std::string dir;
    /// Writes ca.{crt,key}, server.{crt,key} and client.{crt,key} into d; throws when
    /// openssl fails.
    explicit Certs(const std::string& d) : dir(d) {
        std::ofstream(dir + "/ext.cnf") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
        std::string script =
            "set -e; cd " + dir +
            "; openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 "
            "-subj /CN=deadbolt-test-ca 2>/dev/null"
            "; for n in server client; do "
            "openssl req -newkey rsa:2048 -nodes -keyout $n.key -out $n.csr -subj /CN=localhost "
            "2>/dev/null; openssl x509 -req -in $n.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
            "-out $n.crt -days 1 -extfile ext.cnf 2>/dev/null; done";
        std::string out;
        if (run_command({"sh", "-c", script}, &out) != 0)
            throw std::runtime_error("openssl: " + out);
    }
    std::string ca() const { return dir + "/ca.crt"; }
};

}  // namespace deadbolt::test

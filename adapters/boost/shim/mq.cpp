// A C interface to boost::interprocess::message_queue for the ipcbench adapter: every call
// catches every exception and reports it as text, so no C++ exception crosses into Rust.

#include <boost/interprocess/ipc/message_queue.hpp>
#include <boost/date_time/posix_time/posix_time_types.hpp>
#include <boost/version.hpp>

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

namespace bip = boost::interprocess;

namespace {

void report(char* err, size_t len, const char* what) {
    if (err != nullptr && len > 0) {
        std::snprintf(err, len, "%s", what);
    }
}

}  // namespace

extern "C" {

// BOOST_LIB_VERSION, such as "1_74".
const char* ipcb_boost_version() { return BOOST_LIB_VERSION; }

// Creates a queue that must not exist yet. Null on failure, with the reason in `err`.
void* ipcb_mq_create(const char* name, size_t depth, size_t max_size, char* err, size_t len) {
    try {
        // The creator's alone (Boost's default is 0644).
        return new bip::message_queue(bip::create_only, name, depth, max_size, bip::permissions(0600));
    } catch (const std::exception& e) {
        report(err, len, e.what());
    } catch (...) {
        report(err, len, "an unknown C++ exception");
    }
    return nullptr;
}

// Opens an existing queue. Null on failure; `*missing` is 1 when it does not exist (yet).
void* ipcb_mq_open(const char* name, int* missing, char* err, size_t len) {
    *missing = 0;
    try {
        return new bip::message_queue(bip::open_only, name);
    } catch (const bip::interprocess_exception& e) {
        *missing = e.get_error_code() == bip::not_found_error ? 1 : 0;
        report(err, len, e.what());
    } catch (const std::exception& e) {
        report(err, len, e.what());
    } catch (...) {
        report(err, len, "an unknown C++ exception");
    }
    return nullptr;
}

size_t ipcb_mq_depth(void* q) { return static_cast<bip::message_queue*>(q)->get_max_msg(); }

size_t ipcb_mq_max_size(void* q) { return static_cast<bip::message_queue*>(q)->get_max_msg_size(); }

// Sends at priority 0, waiting for room. 0, or -1 with the reason.
int ipcb_mq_send(void* q, const void* buf, size_t size, char* err, size_t len) {
    try {
        static_cast<bip::message_queue*>(q)->send(buf, size, 0);
        return 0;
    } catch (const std::exception& e) {
        report(err, len, e.what());
    } catch (...) {
        report(err, len, "an unknown C++ exception");
    }
    return -1;
}

// Sends at priority 0, waiting at most `ms` for room: 1 sent, 0 timed out, -1 failed.
int ipcb_mq_timed_send(void* q, const void* buf, size_t size, unsigned ms, char* err, size_t len) {
    try {
        const auto until = boost::posix_time::microsec_clock::universal_time() +
                           boost::posix_time::milliseconds(ms);
        return static_cast<bip::message_queue*>(q)->timed_send(buf, size, 0, until) ? 1 : 0;
    } catch (const std::exception& e) {
        report(err, len, e.what());
    } catch (...) {
        report(err, len, "an unknown C++ exception");
    }
    return -1;
}

// Receives one message into `buf` (at least the queue's max size): its length, -2 when `wait`
// is 0 and the queue is empty, or -1 with the reason.
long ipcb_mq_receive(void* q, void* buf, size_t cap, int wait, char* err, size_t len) {
    try {
        bip::message_queue::size_type got = 0;
        unsigned priority = 0;
        auto* mq = static_cast<bip::message_queue*>(q);
        if (wait) {
            mq->receive(buf, cap, got, priority);
        } else if (!mq->try_receive(buf, cap, got, priority)) {
            return -2;
        }
        return static_cast<long>(got);
    } catch (const std::exception& e) {
        report(err, len, e.what());
    } catch (...) {
        report(err, len, "an unknown C++ exception");
    }
    return -1;
}

void ipcb_mq_close(void* q) { delete static_cast<bip::message_queue*>(q); }

// Removes the queue's name (its shared memory lives on while mapped). 1 removed, 0 not there.
int ipcb_mq_remove(const char* name) {
    try {
        return bip::message_queue::remove(name) ? 1 : 0;
    } catch (...) {
        return 0;
    }
}

}  // extern "C"

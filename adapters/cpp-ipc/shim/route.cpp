// The C face of cpp-ipc's ipc::route (one sender, any number of receivers, each receiving every
// message) for the Rust adapter: open, wait for receivers, send, receive into the caller's buffer,
// close. No exception crosses it (cpp-ipc reports by return values).
#include "libipc/ipc.h"

#include <cstdint>
#include <cstring>
#include <new>

extern "C" {

// A route end named `name`, its shared memory under `/dev/shm/<prefix>__IPC_SHM__...`; null if
// it could not connect.
void* ipcb_route_open(const char* prefix, const char* name, int receiver) {
    auto* r = new (std::nothrow) ipc::route{ipc::prefix{prefix}, name, receiver ? ipc::receiver : ipc::sender};
    if (r != nullptr && !r->valid()) {
        delete r;
        return nullptr;
    }
    return r;
}

// Waits up to `ms` until at least `count` receivers are connected.
int ipcb_route_wait_for_recv(void* h, std::size_t count, std::uint64_t ms) {
    return static_cast<ipc::route*>(h)->wait_for_recv(count, ms) ? 1 : 0;
}

std::size_t ipcb_route_recv_count(void* h) {
    return static_cast<ipc::route*>(h)->recv_count();
}

// Sends; waits for room at most `ms` (ipc::invalid_value: for ever), then fails (try_send never
// force-pushes, which would disconnect a slow receiver).
int ipcb_route_send(void* h, const void* data, std::size_t size, std::uint64_t ms) {
    return static_cast<ipc::route*>(h)->try_send(data, size, ms) ? 1 : 0;
}

// Receives one message into `buf`: its length; 0 when none came (polling, or `ms` passed);
// -(its length) when it is longer than `cap`.
long ipcb_route_recv(void* h, void* buf, std::size_t cap, std::uint64_t ms, int poll) {
    auto* r = static_cast<ipc::route*>(h);
    ipc::buff_t b = poll ? r->try_recv() : r->recv(ms);
    if (b.empty()) return 0;
    if (b.size() > cap) return -static_cast<long>(b.size());
    std::memcpy(buf, b.data(), b.size());
    return static_cast<long>(b.size());
}

std::uint64_t ipcb_route_forever() {
    return ipc::invalid_value;
}

void ipcb_route_close(void* h) {
    delete static_cast<ipc::route*>(h);
}

}

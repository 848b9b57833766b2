/* The fake kubelet's stand-in for a pod's own network namespace (tests/fakeapi/sandbox.py).
 *
 * In a cluster every pod has its own network namespace, so a server that listens on every
 * address (":8081", "0.0.0.0:8081", "[::]:8081") listens on its pod IP only, and two pods can
 * both use port 8081. The fake runs pods as processes of the host, each on its own loopback
 * address: preloaded into a pod's processes, this bind() turns a wildcard address into the pod's
 * address ($FAKEAPI_POD_IP) and passes every other bind through unchanged. Programs that make
 * the system call themselves (static or Go binaries) are not covered. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*bind_fn)(int, const struct sockaddr *, socklen_t);

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
    bind_fn next = (bind_fn)dlsym(RTLD_NEXT, "bind");
    const char *ip = getenv("FAKEAPI_POD_IP");
    struct in_addr pod;

    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    if (!addr || !ip || inet_pton(AF_INET, ip, &pod) != 1)
        return next(fd, addr, len);
    if (addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in a;
        memcpy(&a, addr, sizeof(a));
        if (a.sin_addr.s_addr != htonl(INADDR_ANY))
            return next(fd, addr, len);
        a.sin_addr = pod;
        return next(fd, (const struct sockaddr *)&a, sizeof(a));
    }
    if (addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 a6;
        int v6only = 0;
        socklen_t olen = sizeof(v6only);
        memcpy(&a6, addr, sizeof(a6));
        /* A v6-only socket on [::] takes no IPv4 address: nothing to confine. */
        if (!IN6_IS_ADDR_UNSPECIFIED(&a6.sin6_addr) ||
            getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &olen) != 0 || v6only)
            return next(fd, addr, len);
        /* A dual-stack [::] becomes the pod's address, v4-mapped (::ffff:A.B.C.D). */
        memset(&a6.sin6_addr, 0, sizeof(a6.sin6_addr));
        a6.sin6_addr.s6_addr[10] = 0xff;
        a6.sin6_addr.s6_addr[11] = 0xff;
        memcpy(&a6.sin6_addr.s6_addr[12], &pod, 4);
        return next(fd, (const struct sockaddr *)&a6, sizeof(a6));
    }
    return next(fd, addr, len);
}

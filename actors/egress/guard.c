/*
 * Egress guard, loaded into ffmpeg and ffprobe with LD_PRELOAD by the actor host.
 *
 * Every IPv4/IPv6 connect(), sendto() and sendmsg() to an address is checked at the moment it
 * happens, whatever produced the address: the URI, a DNS answer (rebinding included), an RTSP
 * redirect, an RTMP reconnect. A destination in a refused range is failed with EACCES unless an
 * allowed entry matches it. Other socket families (Unix sockets) are untouched, and so is glibc's
 * own resolver, which calls its internal connect and is not interposed.
 *
 * The policy comes from the environment, written by actors/egress/policy.ts:
 *   EMO_EGRESS_REFUSE  comma-separated networks, "address/prefix"
 *   EMO_EGRESS_ALLOW   comma-separated "address/prefix/port" (port 0: any port)
 * An unreadable policy refuses every IPv4/IPv6 destination: the guard fails closed.
 *
 * It also hands the decoder its stream's URI, which must not be on the command line: any local
 * user reads a process's command line in /proc/<pid>/cmdline, and the URI holds the stream key
 * (an RTMP path, an RTSP token, user:password). The command line carries a placeholder,
 * "emo-stream:<session>:<scheme://host:port>", and the URI comes in EMO_STREAM_URI, an
 * environment only the decoder's own user and root can read. glibc calls the constructors of a
 * preloaded library with the process's argc, argv and envp before main() runs, so ffmpeg parses
 * options that hold the URI, while /proc keeps showing the placeholder (the kernel reads the
 * original strings, not the argv array we change). The variable is then wiped from the original
 * environment memory, which /proc/<pid>/environ shows, and taken out of environ. Until then,
 * while the decoder's other libraries initialise (a preloaded library's constructor runs after
 * theirs), /proc/<pid>/environ shows it to the decoder's user and root, who can read the URI
 * in its memory anyway. A placeholder with no URI to put in its place ends the process: it
 * fails closed.
 *
 * Why not another way: ffmpeg 5.1 (Debian 12) reads no option from a file, and an input read
 * through a file or a pipe would need the file and pipe protocols the input whitelist closes.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_RULES 256

/* IPv4 addresses are held in their IPv4-mapped IPv6 form, so one comparison serves both. */
struct rule {
  unsigned char network[16];
  int prefix;
  int port;
};

static struct rule refused[MAX_RULES], allowed[MAX_RULES];
static int refused_count, allowed_count;
static int policy_broken;

static int (*real_connect)(int, const struct sockaddr *, socklen_t);
static ssize_t (*real_sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);

static void map_ipv4(const struct in_addr *ipv4, unsigned char out[16]) {
  memset(out, 0, 10);
  out[10] = out[11] = 0xff;
  memcpy(out + 12, ipv4, 4);
}

/* "address/prefix" or "address/prefix/port" into a rule; 0 on success. */
static int parse_rule(char *text, int with_port, struct rule *rule) {
  char *slash = strchr(text, '/');
  if (!slash) return -1;
  *slash = '\0';
  char *rest = slash + 1, *end;
  long prefix = strtol(rest, &end, 10);
  if (end == rest) return -1;
  rule->port = 0;
  if (with_port) {
    if (*end != '/') return -1;
    char *port_text = end + 1;
    long port = strtol(port_text, &end, 10);
    if (end == port_text || port < 0 || port > 65535) return -1;
    rule->port = (int)port;
  }
  if (*end != '\0') return -1;
  struct in_addr ipv4;
  struct in6_addr ipv6;
  if (inet_pton(AF_INET, text, &ipv4) == 1) {
    if (prefix < 0 || prefix > 32) return -1;
    map_ipv4(&ipv4, rule->network);
    rule->prefix = (int)prefix + 96;
    return 0;
  }
  if (inet_pton(AF_INET6, text, &ipv6) == 1) {
    if (prefix < 0 || prefix > 128) return -1;
    memcpy(rule->network, &ipv6, 16);
    rule->prefix = (int)prefix;
    return 0;
  }
  return -1;
}

static int parse_rules(const char *name, int with_port, struct rule *rules, int *count) {
  const char *value = getenv(name);
  if (!value) return -1;
  char *copy = strdup(value);
  if (!copy) return -1;
  int status = 0;
  char *saved;
  for (char *item = strtok_r(copy, ",", &saved); item; item = strtok_r(NULL, ",", &saved)) {
    if (*count == MAX_RULES || parse_rule(item, with_port, &rules[*count]) != 0) {
      status = -1;
      break;
    }
    (*count)++;
  }
  free(copy);
  return status;
}

#define STREAM_URI_ENTRY "EMO_STREAM_URI="
#define STREAM_PLACEHOLDER "emo-stream:"
/* The exit status of a decoder given a placeholder and no URI. */
#define NO_STREAM_URI 3

/* The URI from the environment, its variable wiped out of memory and out of environ; NULL without one. */
static char *take_stream_uri(char **envp) {
  const size_t name_length = strlen(STREAM_URI_ENTRY);
  char *uri = NULL;
  char **kept = envp;
  for (char **entry = envp; *entry; entry++) {
    if (strncmp(*entry, STREAM_URI_ENTRY, name_length) != 0) {
      *kept++ = *entry;
      continue;
    }
    if (!uri && (*entry)[name_length] != '\0') uri = strdup(*entry + name_length);
    explicit_bzero(*entry, strlen(*entry));
  }
  *kept = NULL;
  return uri;
}

static void hand_over_stream_uri(int argc, char **argv, char **envp) {
  if (!argv || !envp) return;
  char *uri = take_stream_uri(envp);
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], STREAM_PLACEHOLDER, strlen(STREAM_PLACEHOLDER)) != 0) continue;
    if (!uri) {
      fputs("egress guard: no stream URI handed over for " STREAM_PLACEHOLDER " (EMO_STREAM_URI missing)\n", stderr);
      _exit(NO_STREAM_URI);
    }
    argv[i] = uri;
  }
}

__attribute__((constructor)) static void load_guard(int argc, char **argv, char **envp) {
  hand_over_stream_uri(argc, argv, envp);
  real_connect = dlsym(RTLD_NEXT, "connect");
  real_sendto = dlsym(RTLD_NEXT, "sendto");
  real_sendmsg = dlsym(RTLD_NEXT, "sendmsg");
  if (parse_rules("EMO_EGRESS_REFUSE", 0, refused, &refused_count) != 0 ||
      parse_rules("EMO_EGRESS_ALLOW", 1, allowed, &allowed_count) != 0) {
    policy_broken = 1;
  }
}

static int in_network(const unsigned char address[16], const struct rule *rule) {
  int whole = rule->prefix / 8, bits = rule->prefix % 8;
  if (memcmp(address, rule->network, whole) != 0) return 0;
  if (bits == 0) return 1;
  unsigned char mask = (unsigned char)(0xff << (8 - bits));
  return (address[whole] & mask) == (rule->network[whole] & mask);
}

/* Whether a destination may be reached; non-IP destinations always may. */
static int permitted(const struct sockaddr *destination, socklen_t length) {
  unsigned char address[16];
  int port;
  if (!destination) return 1;
  if (destination->sa_family == AF_INET && length >= sizeof(struct sockaddr_in)) {
    const struct sockaddr_in *ipv4 = (const struct sockaddr_in *)destination;
    map_ipv4(&ipv4->sin_addr, address);
    port = ntohs(ipv4->sin_port);
  } else if (destination->sa_family == AF_INET6 && length >= sizeof(struct sockaddr_in6)) {
    const struct sockaddr_in6 *ipv6 = (const struct sockaddr_in6 *)destination;
    memcpy(address, &ipv6->sin6_addr, 16);
    port = ntohs(ipv6->sin6_port);
  } else if (destination->sa_family == AF_INET || destination->sa_family == AF_INET6) {
    return 0; /* too short to read: refuse rather than guess */
  } else {
    return 1;
  }
  if (policy_broken) return 0;
  for (int i = 0; i < allowed_count; i++) {
    if (in_network(address, &allowed[i]) && (allowed[i].port == 0 || allowed[i].port == port)) return 1;
  }
  for (int i = 0; i < refused_count; i++) {
    if (in_network(address, &refused[i])) return 0;
  }
  return 1;
}

int connect(int fd, const struct sockaddr *address, socklen_t length) {
  if (!permitted(address, length)) {
    errno = EACCES;
    return -1;
  }
  return real_connect(fd, address, length);
}

ssize_t sendto(int fd, const void *buffer, size_t size, int flags, const struct sockaddr *address, socklen_t length) {
  if (!permitted(address, length)) {
    errno = EACCES;
    return -1;
  }
  return real_sendto(fd, buffer, size, flags, address, length);
}

ssize_t sendmsg(int fd, const struct msghdr *message, int flags) {
  if (message && !permitted((const struct sockaddr *)message->msg_name, message->msg_namelen)) {
    errno = EACCES;
    return -1;
  }
  return real_sendmsg(fd, message, flags);
}

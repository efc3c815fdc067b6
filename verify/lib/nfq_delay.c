/* The user-space delayer of the `delay` nemesis (network_nemesis.py): there is no netem in this
 * kernel, so an NFQUEUE rule hands the chosen loopback packets to this program, which holds each one
 * DELAY_MS and then lets it go, in arrival order.
 *
 *   nfq_delay QUEUE_NUMBER DELAY_MS
 *
 * Runs until SIGTERM or SIGINT. The rule uses --queue-bypass, so packets pass undelayed whenever no
 * delayer listens (before it starts, after it stops). Built by the nemesis with
 * `gcc -O2 -o nfq_delay nfq_delay.c -lnetfilter_queue` (Debian: libnetfilter-queue-dev). */
#include <arpa/inet.h>
#include <errno.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CAPACITY 65536

static struct { uint32_t id; long long due_ns; } held[CAPACITY];
static size_t head, count;
static long long delay_ns;
static volatile sig_atomic_t stopping;

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int on_packet(struct nfq_q_handle *queue, struct nfgenmsg *msg, struct nfq_data *packet, void *data) {
  (void)msg; (void)data;
  struct nfqnl_msg_packet_hdr *header = nfq_get_msg_packet_hdr(packet);
  if (!header) return 0;
  uint32_t id = ntohl(header->packet_id);
  if (count == CAPACITY) return nfq_set_verdict(queue, id, NF_ACCEPT, 0, NULL); /* full: no delay */
  size_t tail = (head + count) % CAPACITY;
  held[tail].id = id;
  held[tail].due_ns = now_ns() + delay_ns;
  ++count;
  return 0;
}

static void on_signal(int sig) { (void)sig; stopping = 1; }

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: nfq_delay QUEUE_NUMBER DELAY_MS\n"); return 2; }
  int queue_number = atoi(argv[1]);
  delay_ns = atoll(argv[2]) * 1000000LL;
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  struct nfq_handle *handle = nfq_open();
  if (!handle) { perror("nfq_open"); return 1; }
  struct nfq_q_handle *queue = nfq_create_queue(handle, (uint16_t)queue_number, on_packet, NULL);
  if (!queue) { perror("nfq_create_queue"); return 1; }
  if (nfq_set_mode(queue, NFQNL_COPY_META, 0) < 0) { perror("nfq_set_mode"); return 1; }
  nfq_set_queue_maxlen(queue, CAPACITY);
  int fd = nfq_fd(handle);
  char buffer[65536] __attribute__((aligned));
  while (!stopping) {
    long long now = now_ns();
    while (count && held[head].due_ns <= now) {
      nfq_set_verdict(queue, held[head].id, NF_ACCEPT, 0, NULL);
      head = (head + 1) % CAPACITY;
      --count;
    }
    int timeout_ms = count ? (int)((held[head].due_ns - now) / 1000000LL) + 1 : 100;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) > 0) {
      int n = (int)recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) nfq_handle_packet(handle, buffer, n);
      else if (n < 0 && errno != EAGAIN && errno != EINTR && errno != ENOBUFS) { perror("recv"); break; }
    }
  }
  while (count) { /* let what is held go before leaving */
    nfq_set_verdict(queue, held[head].id, NF_ACCEPT, 0, NULL);
    head = (head + 1) % CAPACITY;
    --count;
  }
  nfq_destroy_queue(queue);
  nfq_close(handle);
  return 0;
}

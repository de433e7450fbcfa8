/*
 * stride.c - simnuma's native stride benchmark.
 *
 * Measures the memory bandwidth and latency seen by threads pinned to cores
 * of a ccNUMA machine, each walking its own array bound to a chosen NUMA
 * node.  Threads are written in the notation the simnuma model uses:
 *
 *     N.C.op.M[@RATE]
 *
 * a thread on node N, on the C-th CPU of that node (sysfs cpulist order),
 * doing op r (read one word per 64-byte line), w (write one word per line),
 * t (STREAM triad a[i] = b[i] + s*c[i]) or l (dependent loads along a random
 * cyclic permutation of the lines), over an array on node M; @RATE (e.g.
 * @0.5GB/s, @500MB/s) paces the thread to that demand.
 *
 * Standalone: C11 + pthreads, Linux, no libnuma (raw mbind, get_mempolicy and
 * move_pages system calls).  Build it by hand with
 *
 *     cc -O2 -pthread stride.c -o stride
 *
 * and run "./stride --help".  The output is JSON, format "simnuma-bench/2".
 *
 * Pages: the latency chase's arrays are 2 MiB-aligned and advised with
 * madvise(MADV_HUGEPAGE) before the first touch, so that its dependent loads
 * measure memory rather than page walks; the streaming ops' arrays are advised
 * MADV_NOHUGEPAGE, so that they run on base pages whatever the kernel's
 * transparent huge page mode (--pages auto|huge|base chooses otherwise).  What
 * the kernel granted is read back from /proc/self/smaps (AnonHugePages).
 *
 * Exit status: 0 on success; 2 when the request cannot be honoured (malformed
 * spec or option, missing node or core, more threads than CPUs, not enough
 * free memory, a placement that fails); 1 on unexpected system failures.
 * Every failure is reported as one line on stderr.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define FORMAT_NAME "simnuma-bench/2"
#define LINE_BYTES 64
#define WORDS_PER_LINE (LINE_BYTES / 8)
#define CHUNK_LINES 1024              /* pacing and stop-check granularity: 64 KiB */
#define MAX_THREADS 1024
#define MAX_CACHES 32
#define NODEMASK_BITS 1024            /* node ids up to NODEMASK_BITS - 2 */
#define MIN_DEFAULT_BYTES (64LL << 20)
#define PLACEMENT_REQUIRED 0.99
#define SPREAD_WARNING 0.05
#define CPU_SHARE_WARNING 0.90
#define MOVE_PAGES_BATCH 4096
#define DEFAULT_REPS 5
#define DEFAULT_SIZE_ALIGN (2LL << 20) /* the default size is whole 2 MiB: whole huge pages on x86 */
#define HUGE_REQUIRED 0.99            /* of the huge pages that fit, below this is a warning */

#ifndef MPOL_BIND
#define MPOL_BIND 2
#endif
#ifndef MPOL_F_ADDR
#define MPOL_F_ADDR (1 << 1)
#endif
#ifndef MPOL_F_MEMS_ALLOWED
#define MPOL_F_MEMS_ALLOWED (1 << 2)
#endif

/* ------------------------------------------------------------------ errors */

/* One line on stderr, then exit with ``status``. */
static void vdie(int status, const char *fmt, va_list ap) __attribute__((noreturn, format(printf, 2, 0)));
static void vdie(int status, const char *fmt, va_list ap)
{
    fputs("stride: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    exit(status);
}

/* A request the machine cannot honour: one line, exit status 2. */
static void die_user(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die_user(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdie(2, fmt, ap);
}

/* An unexpected system failure: one line, exit status 1. */
static void die_system(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die_system(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdie(1, fmt, ap);
}

static void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        die_system("out of memory allocating %zu bytes", count * size);
    return p;
}

/* ------------------------------------------------------------ string buffer */

typedef struct {
    char *text;
    size_t length;
    size_t capacity;
} strbuf;

static void sb_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(strbuf *sb, const char *fmt, ...)
{
    for (;;) {
        size_t room = sb->capacity - sb->length;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(sb->text ? sb->text + sb->length : NULL, sb->text ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            die_system("cannot format output");
        if (sb->text && (size_t)n < room) {
            sb->length += (size_t)n;
            return;
        }
        size_t need = sb->length + (size_t)n + 1;
        size_t capacity = sb->capacity ? sb->capacity : 4096;
        while (capacity < need)
            capacity *= 2;
        char *grown = realloc(sb->text, capacity);
        if (!grown)
            die_system("out of memory formatting output");
        sb->text = grown;
        sb->capacity = capacity;
    }
}

/* The length of the well-formed UTF-8 sequence at p (1 to 4), or 0 where it is not one. */
static int utf8_length(const unsigned char *p)
{
    int n = p[0] < 0x80 ? 1 : (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3 : (p[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || (n == 2 && p[0] < 0xC2) || (n == 4 && p[0] > 0xF4))
        return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((n == 3 && p[0] == 0xE0 && p[1] < 0xA0) || (n == 3 && p[0] == 0xED && p[1] >= 0xA0) ||
        (n == 4 && p[0] == 0xF0 && p[1] < 0x90) || (n == 4 && p[0] == 0xF4 && p[1] >= 0x90))
        return 0;   /* overlong, a surrogate, or beyond U+10FFFF */
    return n;
}

/* A JSON string: quotes, backslashes and control characters escaped, and any byte that is not part of a
   well-formed UTF-8 sequence (a path or a cpuinfo in another encoding) written as U+FFFD, so that the report is
   always valid JSON. */
static void sb_json_string(strbuf *sb, const char *s)
{
    sb_printf(sb, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_length(p);
        if (n == 0) {
            sb_printf(sb, "\\ufffd");
            p++;
        } else if (*p == '"' || *p == '\\') {
            sb_printf(sb, "\\%c", *p++);
        } else if (*p < 0x20) {
            sb_printf(sb, "\\u%04x", *p++);
        } else {
            sb_printf(sb, "%.*s", n, (const char *)p);
            p += n;
        }
    }
    sb_printf(sb, "\"");
}

/* A finite double, or null. */
static void sb_json_number(strbuf *sb, double value)
{
    if (value != value || value > 1e300 || value < -1e300)
        sb_printf(sb, "null");
    else
        sb_printf(sb, "%.9g", value);
}

/* A positive number, or null when the value is not positive (not measured). */
static void sb_json_positive(strbuf *sb, double value)
{
    if (value > 0)
        sb_json_number(sb, value);
    else
        sb_printf(sb, "null");
}

/* "3.1 GiB" style, for messages. */
static const char *format_bytes(double bytes, char *out, size_t size)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double value = bytes;
    int unit = 0;
    while (value >= 1024.0 && unit < 5) {
        value /= 1024.0;
        unit++;
    }
    if (unit == 0 || value == (double)(long long)value)
        snprintf(out, size, "%lld %s", (long long)value, units[unit]);
    else
        snprintf(out, size, "%.1f %s", value, units[unit]);
    return out;
}

/* --------------------------------------------------------------- quantities */

typedef struct {
    const char *name;
    double factor;
} unit_def;

static const unit_def SIZE_UNITS[] = {
    {"B", 1.0}, {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {NULL, 0.0},
};

/* Rates in bytes per second. */
static const unit_def RATE_UNITS[] = {
    {"B/s", 1.0}, {"kB/s", 1e3}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}, {"TB/s", 1e12},
    {"KiB/s", 1024.0}, {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0},
    {NULL, 0.0},
};

static void unit_names(const unit_def *units, char *out, size_t size)
{
    out[0] = '\0';
    for (const unit_def *u = units; u->name; u++) {
        if (u != units)
            strncat(out, ", ", size - strlen(out) - 1);
        strncat(out, u->name, size - strlen(out) - 1);
    }
}

/* Length of a leading decimal number ([+-]digits[.digits][e[+-]digits]), 0 if none. */
static size_t number_length(const char *s)
{
    size_t i = 0, digits = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    while (isdigit((unsigned char)s[i])) {
        i++;
        digits++;
    }
    if (s[i] == '.') {
        i++;
        while (isdigit((unsigned char)s[i])) {
            i++;
            digits++;
        }
    }
    if (digits == 0)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-')
            j++;
        if (isdigit((unsigned char)s[j])) {
            while (isdigit((unsigned char)s[j]))
                j++;
            i = j;
        }
    }
    return i;
}

enum { QUANTITY_OK = 0, QUANTITY_MALFORMED = -1, QUANTITY_UNKNOWN_UNIT = -2 };

/*
 * Parse "<number>[ ]<unit>" strictly (surrounding blanks allowed) into the
 * number times the unit's factor.  A bare number is accepted only when
 * bare_factor is non-zero.  On QUANTITY_UNKNOWN_UNIT, unit_out holds the unit.
 */
static int parse_quantity(const char *text, const unit_def *units, double bare_factor, double *value,
                          char *unit_out, size_t unit_size)
{
    while (isspace((unsigned char)*text))
        text++;
    size_t n = number_length(text);
    if (n == 0 || n >= 64)
        return QUANTITY_MALFORMED;
    char number[64];
    memcpy(number, text, n);
    number[n] = '\0';
    double magnitude = strtod(number, NULL);
    const char *p = text + n;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *unit = p;
    while (*p && !isspace((unsigned char)*p))
        p++;
    size_t unit_length = (size_t)(p - unit);
    while (isspace((unsigned char)*p))
        p++;
    if (*p)
        return QUANTITY_MALFORMED;
    if (unit_length == 0) {
        if (bare_factor == 0.0)
            return QUANTITY_MALFORMED;
        *value = magnitude * bare_factor;
        return QUANTITY_OK;
    }
    for (const unit_def *u = units; u->name; u++) {
        if (strlen(u->name) == unit_length && strncmp(u->name, unit, unit_length) == 0) {
            *value = magnitude * u->factor;
            return QUANTITY_OK;
        }
    }
    snprintf(unit_out, unit_size, "%.*s", (int)(unit_length < 40 ? unit_length : 40), unit);
    return QUANTITY_UNKNOWN_UNIT;
}

/* --size: bytes, with or without a unit; rounded up to whole pages by the caller. */
static long long parse_size_bytes(const char *text)
{
    double bytes = 0.0;
    char unit[48], names[256];
    int status = parse_quantity(text, SIZE_UNITS, 1.0, &bytes, unit, sizeof unit);
    if (status == QUANTITY_UNKNOWN_UNIT) {
        unit_names(SIZE_UNITS, names, sizeof names);
        die_user("--size '%s': unknown unit '%s'; expected one of: %s", text, unit, names);
    }
    if (status != QUANTITY_OK)
        die_user("--size '%s': expected a size such as '64MiB' or a number of bytes", text);
    if (bytes != (double)(long long)bytes)
        die_user("--size '%s': expected a whole number of bytes", text);
    if (bytes <= 0 || bytes > 9.0e18)
        die_user("--size '%s': must be positive and below 8 EiB", text);
    return (long long)bytes;
}

/* ------------------------------------------------------------- file helpers */

/* Read a small text file; strip trailing blanks.  Returns the length or -1. */
static long read_text(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && isspace((unsigned char)buf[n - 1]))
        buf[--n] = '\0';
    return (long)n;
}

/* Read a whole text file of any size into a new buffer (NULL when unreadable). */
static char *read_whole(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t capacity = 8192, length = 0;
    char *buf = xcalloc(capacity, 1);
    for (;;) {
        size_t n = fread(buf + length, 1, capacity - length - 1, f);
        length += n;
        if (length + 1 < capacity)
            break;
        capacity *= 2;
        char *grown = realloc(buf, capacity);
        if (!grown)
            die_system("out of memory reading %s", path);
        buf = grown;
    }
    fclose(f);
    buf[length] = '\0';
    return buf;
}

/* The value after "key:" in a "key: value" text (e.g. /proc/cpuinfo), or "". */
static void find_field(const char *text, const char *key, char *out, size_t size)
{
    size_t key_length = strlen(key);
    out[0] = '\0';
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, key, key_length) != 0)
            continue;
        const char *p = line + key_length;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != ':')
            continue;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, "\n");
        snprintf(out, size, "%.*s", (int)(n < size - 1 ? n : size - 1), p);
        return;
    }
}

/* The number after "key" on the first line containing it, in kB -> bytes; -1 if absent. */
static long long meminfo_bytes(const char *text, const char *key)
{
    const char *p = text ? strstr(text, key) : NULL;
    if (!p)
        return -1;
    p += strlen(key);
    char *end;
    long long kilobytes = strtoll(p, &end, 10);
    if (end == p)
        return -1;
    return kilobytes * 1024LL;
}

/*
 * What a node can give an array: its free memory and the page cache and kernel caches the kernel
 * reclaims first (Inactive(file), KReclaimable) where the meminfo has them, as binding to the node
 * reclaims them before it fails; `source` says which were counted, and where.
 */
static long long available_bytes(const char *meminfo, const char *where, char *source, size_t size)
{
    long long bytes = meminfo_bytes(meminfo, "MemFree:");
    int n = snprintf(source, size, "MemFree");
    static const char *reclaimable[] = {"Inactive(file):", "KReclaimable:"};
    for (int i = 0; i < 2 && bytes >= 0; i++) {
        long long more = meminfo_bytes(meminfo, reclaimable[i]);
        if (more > 0) {
            bytes += more;
            n += snprintf(source + n, size > (size_t)n ? size - (size_t)n : 0, " + %.*s",
                          (int)strlen(reclaimable[i]) - 1, reclaimable[i]);
        }
    }
    snprintf(source + n, size > (size_t)n ? size - (size_t)n : 0, " in %s", where);
    return bytes;
}

/* ------------------------------------------------------------ host discovery */

typedef struct {
    int id;
    int *cpus;                    /* in sysfs cpulist order */
    int ncpus;
    long long memory_total_bytes; /* -1 when unknown */
    long long memory_free_bytes;  /* -1 when unknown */
    char free_source[PATH_MAX + 16]; /* where memory_free_bytes came from */
} node_info;

typedef struct {
    int level;
    char type[24];
    long long size_bytes;
} cache_info;

typedef struct {
    const char *sysfs_root;
    node_info *nodes;
    int nnodes;
    int *distances; /* nnodes x nnodes, NULL when unknown */
    cache_info caches[MAX_CACHES];
    int ncaches;
    long long llc_bytes;
    char thp_mode[32];            /* "always", "madvise", "never"; "" when the kernel has no THP */
    long long huge_page_bytes;    /* hpage_pmd_size; -1 when unknown */
    char governor[64];
    char cpu_model[256];
    struct utsname uts;
    int ncpus;
    long page_bytes;
    int numa_visible; /* 0 when the kernel shows no node directories */
    cpu_set_t *allowed_cpus;      /* sched_getaffinity of the process; NULL when unknown */
    size_t allowed_size;          /* bytes of allowed_cpus */
    unsigned long mems_allowed[NODEMASK_BITS / (8 * sizeof(unsigned long))]; /* the cpuset's memory nodes */
    int mems_known;               /* 0 when get_mempolicy(MPOL_F_MEMS_ALLOWED) failed */
} host_info;

/* Parse a cpulist ("0-3,8,10-11"); returns the count or -1 when malformed. */
static int parse_cpulist(const char *text, int **cpus_out)
{
    int count = 0, capacity = 16;
    int *cpus = xcalloc((size_t)capacity, sizeof *cpus);
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p)
            break;
        if (!isdigit((unsigned char)*p)) {
            free(cpus);
            return -1;
        }
        char *end;
        long first = strtol(p, &end, 10), last = first;
        p = end;
        if (*p == '-') {
            p++;
            if (!isdigit((unsigned char)*p)) {
                free(cpus);
                return -1;
            }
            last = strtol(p, &end, 10);
            p = end;
        }
        if (last < first || last > 1L << 20 || (*p && *p != ',' && *p != ' ')) {
            free(cpus);
            return -1;
        }
        for (long cpu = first; cpu <= last; cpu++) {
            if (count == capacity) {
                capacity *= 2;
                int *grown = realloc(cpus, (size_t)capacity * sizeof *cpus);
                if (!grown)
                    die_system("out of memory reading a cpulist");
                cpus = grown;
            }
            cpus[count++] = (int)cpu;
        }
    }
    *cpus_out = cpus;
    return count;
}

static int compare_ints(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Ids of the nodeN directories under ROOT/devices/system/node, sorted. */
static int list_node_ids(const char *root, int **ids_out)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/devices/system/node", root);
    DIR *dir = opendir(path);
    if (!dir)
        return 0;
    int count = 0, capacity = 8;
    int *ids = xcalloc((size_t)capacity, sizeof *ids);
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        const char *name = entry->d_name;
        if (strncmp(name, "node", 4) != 0 || !name[4])
            continue;
        int all_digits = 1;
        for (const char *c = name + 4; *c; c++)
            all_digits &= isdigit((unsigned char)*c) != 0;
        if (!all_digits || strlen(name + 4) > 6)
            continue;
        if (count == capacity) {
            capacity *= 2;
            int *grown = realloc(ids, (size_t)capacity * sizeof *ids);
            if (!grown)
                die_system("out of memory listing nodes");
            ids = grown;
        }
        ids[count++] = atoi(name + 4);
    }
    closedir(dir);
    qsort(ids, (size_t)count, sizeof *ids, compare_ints);
    *ids_out = ids;
    return count;
}

static void read_node(const char *root, node_info *node)
{
    char path[PATH_MAX], text[16384];
    snprintf(path, sizeof path, "%s/devices/system/node/node%d/cpulist", root, node->id);
    node->ncpus = 0;
    node->cpus = NULL;
    if (read_text(path, text, sizeof text) >= 0) {
        node->ncpus = parse_cpulist(text, &node->cpus);
        if (node->ncpus < 0)
            die_user("malformed cpulist in %s: '%s'", path, text);
    }
    snprintf(path, sizeof path, "%s/devices/system/node/node%d/meminfo", root, node->id);
    char *meminfo = read_whole(path);
    node->memory_total_bytes = meminfo_bytes(meminfo, "MemTotal:");
    node->memory_free_bytes = available_bytes(meminfo, path, node->free_source, sizeof node->free_source);
    free(meminfo);
}

static void read_distances(host_info *host)
{
    char path[PATH_MAX], text[16384];
    int n = host->nnodes;
    host->distances = xcalloc((size_t)n * (size_t)n, sizeof *host->distances);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/devices/system/node/node%d/distance", host->sysfs_root,
                 host->nodes[i].id);
        int count = 0;
        if (read_text(path, text, sizeof text) >= 0) {
            char *p = text, *end;
            for (;;) {
                long value = strtol(p, &end, 10);
                if (end == p)
                    break;
                if (count < n)
                    host->distances[i * n + count] = (int)value;
                count++;
                p = end;
            }
        }
        if (count != n) {
            free(host->distances);
            host->distances = NULL;
            return;
        }
    }
}

/* No node directories (a kernel without NUMA): one node 0 holding every online CPU. */
static void synthesize_single_node(host_info *host)
{
    char path[PATH_MAX], text[16384];
    host->nnodes = 1;
    host->nodes = xcalloc(1, sizeof *host->nodes);
    node_info *node = &host->nodes[0];
    node->id = 0;
    snprintf(path, sizeof path, "%s/devices/system/cpu/online", host->sysfs_root);
    node->cpus = NULL;
    if (read_text(path, text, sizeof text) < 0 || (node->ncpus = parse_cpulist(text, &node->cpus)) <= 0) {
        free(node->cpus);
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        node->ncpus = online > 0 ? (int)online : 1;
        node->cpus = xcalloc((size_t)node->ncpus, sizeof *node->cpus);
        for (int i = 0; i < node->ncpus; i++)
            node->cpus[i] = i;
    }
    node->memory_total_bytes = node->memory_free_bytes = -1;
    node->free_source[0] = '\0';
}

/*
 * On a one-node host the node's free memory is the machine's: when the
 * real /sys is used, take the larger of the node's MemFree and the MemFree
 * of /proc/meminfo (some virtual machines under-report hot-plugged memory
 * in the node's meminfo).
 */
static void merge_proc_meminfo(host_info *host)
{
    if (host->nnodes != 1 || strcmp(host->sysfs_root, "/sys") != 0)
        return;
    char *meminfo = read_whole("/proc/meminfo");
    long long total = meminfo_bytes(meminfo, "MemTotal:");
    char source[sizeof host->nodes[0].free_source];
    long long free_bytes = available_bytes(meminfo, "/proc/meminfo", source, sizeof source);
    free(meminfo);
    node_info *node = &host->nodes[0];
    if (total > node->memory_total_bytes)
        node->memory_total_bytes = total;
    if (free_bytes > node->memory_free_bytes) {
        node->memory_free_bytes = free_bytes;
        snprintf(node->free_source, sizeof node->free_source, "%s", source);
    }
}

static long long parse_cache_size(const char *text)
{
    char *end;
    long long value = strtoll(text, &end, 10);
    switch (*end) {
    case 'K': return value << 10;
    case 'M': return value << 20;
    case 'G': return value << 30;
    default: return value;
    }
}

static void read_caches(host_info *host)
{
    int cpu = 0;
    for (int i = 0; i < host->nnodes; i++) {
        if (host->nodes[i].ncpus > 0) {
            cpu = host->nodes[i].cpus[0];
            break;
        }
    }
    host->ncaches = 0;
    host->llc_bytes = 0;
    int llc_level = 0;
    for (int index = 0; index < MAX_CACHES; index++) {
        char base[PATH_MAX], path[PATH_MAX + 16], text[64];
        snprintf(base, sizeof base, "%s/devices/system/cpu/cpu%d/cache/index%d", host->sysfs_root, cpu, index);
        cache_info cache;
        snprintf(path, sizeof path, "%s/level", base);
        if (read_text(path, text, sizeof text) < 0)
            continue;
        cache.level = atoi(text);
        snprintf(path, sizeof path, "%s/type", base);
        if (read_text(path, cache.type, sizeof cache.type) < 0)
            snprintf(cache.type, sizeof cache.type, "Unknown");
        snprintf(path, sizeof path, "%s/size", base);
        if (read_text(path, text, sizeof text) < 0)
            continue;
        cache.size_bytes = parse_cache_size(text);
        host->caches[host->ncaches++] = cache;
        if (strcmp(cache.type, "Instruction") == 0)
            continue;
        if (cache.level > llc_level || (cache.level == llc_level && cache.size_bytes > host->llc_bytes)) {
            llc_level = cache.level;
            host->llc_bytes = cache.size_bytes;
        }
    }
}

static void read_cpu_model(host_info *host)
{
    static const char *keys[] = {"model name", "Model", "cpu model", "Hardware", "cpu", NULL};
    /* Another machine's sysfs copy names its CPU in ROOT/cpuinfo (a copy of its /proc/cpuinfo), if at all. */
    char path[PATH_MAX];
    if (strcmp(host->sysfs_root, "/sys") == 0)
        snprintf(path, sizeof path, "/proc/cpuinfo");
    else
        snprintf(path, sizeof path, "%s/cpuinfo", host->sysfs_root);
    char *cpuinfo = read_whole(path);
    host->cpu_model[0] = '\0';
    for (int i = 0; cpuinfo && keys[i] && !host->cpu_model[0]; i++)
        find_field(cpuinfo, keys[i], host->cpu_model, sizeof host->cpu_model);
    if (!host->cpu_model[0])
        snprintf(host->cpu_model, sizeof host->cpu_model, "unknown");
    free(cpuinfo);
}

static void read_kernel_settings(host_info *host)
{
    char path[PATH_MAX], text[256];
    host->thp_mode[0] = '\0';
    snprintf(path, sizeof path, "%s/kernel/mm/transparent_hugepage/enabled", host->sysfs_root);
    if (read_text(path, text, sizeof text) >= 0) {
        char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;
        if (open && close)
            snprintf(host->thp_mode, sizeof host->thp_mode, "%.*s", (int)(close - open - 1), open + 1);
    }
    host->huge_page_bytes = -1;
    snprintf(path, sizeof path, "%s/kernel/mm/transparent_hugepage/hpage_pmd_size", host->sysfs_root);
    if (read_text(path, text, sizeof text) > 0) {
        char *end;
        long long bytes = strtoll(text, &end, 10);
        if (end != text && *end == '\0' && bytes > 0)
            host->huge_page_bytes = bytes;
    }
    host->governor[0] = '\0';
    for (int i = 0; i < host->nnodes && !host->governor[0]; i++) {
        if (host->nodes[i].ncpus == 0)
            continue;
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cpufreq/scaling_governor", host->sysfs_root,
                 host->nodes[i].cpus[0]);
        if (read_text(path, text, sizeof text) > 0)
            snprintf(host->governor, sizeof host->governor, "%.63s", text);
    }
}

/*
 * The CPUs this process may run on (its affinity: a cpuset, taskset, numactl
 * or a batch scheduler restricts it) and the memory nodes its cpuset allows
 * (Cpus_allowed and Mems_allowed of /proc/self/status).  The mask grows until
 * it holds every CPU id the kernel has, so hosts above 1024 CPUs work.
 */
static void read_allowed(host_info *host)
{
    host->allowed_cpus = NULL;
    host->allowed_size = 0;
    for (size_t ncpus = 1024; ncpus <= (1u << 22); ncpus *= 2) {
        cpu_set_t *set = CPU_ALLOC(ncpus);
        size_t size = CPU_ALLOC_SIZE(ncpus);
        if (!set)
            die_system("out of memory reading the CPU affinity");
        CPU_ZERO_S(size, set);
        if (sched_getaffinity(0, size, set) == 0) {
            host->allowed_cpus = set;
            host->allowed_size = size;
            break;
        }
        int error = errno;
        CPU_FREE(set);
        if (error != EINVAL)
            break;
    }
    memset(host->mems_allowed, 0, sizeof host->mems_allowed);
    host->mems_known = syscall(SYS_get_mempolicy, NULL, host->mems_allowed, (unsigned long)NODEMASK_BITS, NULL,
                               (unsigned long)MPOL_F_MEMS_ALLOWED) == 0;
}

/* Whether the process may run on cpu (context: the host_info). */
static int cpu_allowed(const void *context, int cpu)
{
    const host_info *host = context;
    if (!host->allowed_cpus)
        return 1;
    return cpu >= 0 && CPU_ISSET_S((size_t)cpu, host->allowed_size, host->allowed_cpus);
}

/* Whether the process may put memory on node (context: the host_info). */
static int mem_allowed(const void *context, int node)
{
    const host_info *host = context;
    const size_t bits = 8 * sizeof(unsigned long);
    if (!host->mems_known)
        return 1;
    if (node < 0 || node > NODEMASK_BITS - 2)
        return 0;
    return (host->mems_allowed[(size_t)node / bits] >> ((size_t)node % bits)) & 1UL;
}

/* Append "a-b" or "a" for a run of ids to out. */
static void append_range(char *out, size_t size, int first, int last)
{
    size_t used = strlen(out);
    if (used + 1 >= size)
        return;
    if (first == last)
        snprintf(out + used, size - used, "%s%d", used ? "," : "", first);
    else
        snprintf(out + used, size - used, "%s%d-%d", used ? "," : "", first, last);
}

/* The ids below count that are members (member(context, id)) as a list ("0-3,8"), "" when there are none. */
static const char *id_list(const void *context, int count, int (*member)(const void *, int), char *out, size_t size)
{
    out[0] = '\0';
    int first = -1;
    for (int id = 0; id <= count; id++) {
        int in = id < count && member(context, id);
        if (in && first < 0)
            first = id;
        if (!in && first >= 0) {
            append_range(out, size, first, id - 1);
            first = -1;
        }
    }
    return out;
}

/* The allowed CPUs as a cpulist ("0-3,8"), "none" when empty. */
static const char *allowed_cpu_list(const host_info *host, char *out, size_t size)
{
    if (!id_list(host, (int)(host->allowed_size * 8), cpu_allowed, out, size)[0])
        snprintf(out, size, "none");
    return out;
}

/* The allowed memory nodes as a list ("0-1,3"), "none" when empty. */
static const char *allowed_mem_list(const host_info *host, char *out, size_t size)
{
    if (!id_list(host, NODEMASK_BITS - 1, mem_allowed, out, size)[0])
        snprintf(out, size, "none");
    return out;
}

/* Whether two paths name the same file (this machine's /sys however written: /sys/, //sys, a link to it). */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void discover_host(host_info *host, const char *sysfs_root)
{
    char system[PATH_MAX];
    snprintf(system, sizeof system, "%s/devices/system", sysfs_root);
    struct stat st;
    if (stat(system, &st) != 0 || !S_ISDIR(st.st_mode))
        die_user("--sysfs %s: not a sysfs tree (no devices/system); give the folder sysfs is mounted on, e.g. /sys",
                 sysfs_root);
    memset(host, 0, sizeof *host);
    host->sysfs_root = sysfs_root;
    int *ids = NULL;
    int count = list_node_ids(sysfs_root, &ids);
    host->numa_visible = count > 0;
    if (count == 0) {
        free(ids);
        synthesize_single_node(host);
    } else {
        host->nnodes = count;
        host->nodes = xcalloc((size_t)count, sizeof *host->nodes);
        for (int i = 0; i < count; i++) {
            host->nodes[i].id = ids[i];
            read_node(sysfs_root, &host->nodes[i]);
        }
        free(ids);
        read_distances(host);
    }
    merge_proc_meminfo(host);
    host->ncpus = 0;
    for (int i = 0; i < host->nnodes; i++)
        host->ncpus += host->nodes[i].ncpus;
    read_caches(host);
    read_cpu_model(host);
    read_kernel_settings(host);
    if (uname(&host->uts) != 0)
        memset(&host->uts, 0, sizeof host->uts);
    host->page_bytes = sysconf(_SC_PAGESIZE);
    if (host->page_bytes <= 0)
        host->page_bytes = 4096;
    read_allowed(host);
}

static void release_host(host_info *host)
{
    for (int i = 0; i < host->nnodes; i++)
        free(host->nodes[i].cpus);
    free(host->nodes);
    free(host->distances);
    if (host->allowed_cpus)
        CPU_FREE(host->allowed_cpus);
}

static int node_index(const host_info *host, int id)
{
    for (int i = 0; i < host->nnodes; i++)
        if (host->nodes[i].id == id)
            return i;
    return -1;
}

/* "0, 2, 3" (every node) or only the nodes with memory or with CPUs. */
enum { NODES_ALL, NODES_WITH_MEMORY, NODES_WITH_CPUS };

static const char *node_list(const host_info *host, int which, char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; i < host->nnodes; i++) {
        const node_info *node = &host->nodes[i];
        if (which == NODES_WITH_MEMORY && node->memory_total_bytes == 0)
            continue;
        if (which == NODES_WITH_CPUS && node->ncpus == 0)
            continue;
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%d", used ? ", " : "", node->id);
    }
    return out;
}

/* ------------------------------------------------------------ thread specs */

typedef struct {
    char label[256];
    int node, core, mem_node;
    char op;
    double rate_bytes_per_second; /* 0 when unthrottled */
    int background;
    int cpu;          /* resolved: the core-th CPU of the node */
    int arrays;       /* 3 for the triad, else 1 */
    int huge;         /* huge pages requested for its arrays (--pages) */
} thread_spec;

static int parse_small_int(const char **p, int *value)
{
    const char *start = *p;
    long long v = 0;
    while (isdigit((unsigned char)**p)) {
        v = v * 10 + (**p - '0');
        if (v > 100000000)
            return -1;
        (*p)++;
    }
    if (*p == start)
        return -1;
    *value = (int)v;
    return 0;
}

/* Parse N.C.op.M[@RATE] into spec (not yet resolved against the host). */
static void parse_spec(const char *text, int background, thread_spec *spec)
{
    static const char *example = "expected a thread spec N.C.op.M[@RATE], e.g. 0.0.r.1 or 1.1.r.1@0.5GB/s";
    char raw[256];
    while (isspace((unsigned char)*text))
        text++;
    snprintf(raw, sizeof raw, "%s", text);
    for (size_t n = strlen(raw); n > 0 && isspace((unsigned char)raw[n - 1]); n--)
        raw[n - 1] = '\0';
    memset(spec, 0, sizeof *spec);
    spec->background = background;
    const char *p = raw;
    char op[16];
    size_t op_length = 0;
    if (parse_small_int(&p, &spec->node) || *p++ != '.' || parse_small_int(&p, &spec->core) || *p++ != '.')
        die_user("'%s': %s", raw, example);
    while (*p >= 'a' && *p <= 'z' && op_length < sizeof op - 1)
        op[op_length++] = *p++;
    op[op_length] = '\0';
    if (op_length == 0 || *p++ != '.' || parse_small_int(&p, &spec->mem_node) || (*p && *p != '@'))
        die_user("'%s': %s", raw, example);
    if (op_length != 1 || !strchr("rwtl", op[0]))
        die_user("'%s': unknown op '%s'; expected one of r, w, t, l", raw, op);
    spec->op = op[0];
    spec->arrays = spec->op == 't' ? 3 : 1;
    if (*p == '@') {
        char unit[48], names[256];
        int status = parse_quantity(p + 1, RATE_UNITS, 0.0, &spec->rate_bytes_per_second, unit, sizeof unit);
        if (status == QUANTITY_UNKNOWN_UNIT) {
            unit_names(RATE_UNITS, names, sizeof names);
            die_user("'%s': malformed rate: unknown unit '%s' in '%s'; expected one of: %s", raw, unit, p + 1,
                     names);
        }
        if (status != QUANTITY_OK)
            die_user("'%s': malformed rate: expected a bandwidth such as '4 GB/s', got '%s'", raw, p + 1);
        if (!(spec->rate_bytes_per_second > 0))
            die_user("'%s': the rate must be positive", raw);
        if (!isfinite(spec->rate_bytes_per_second))
            die_user("'%s': malformed rate: expected a finite quantity, got '%s'", raw, p + 1);
        if (spec->rate_bytes_per_second < 1e6)
            die_user("'%s': the slowest rate is 1 MB/s (a slower thread would take hours of simulated events to"
                     " measure)", raw);
    }
    snprintf(spec->label, sizeof spec->label, "%s", raw);
}

typedef struct {
    const host_info *host;
    const node_info *node;
} node_view;

/* Whether the process may run on core c of a node (context: a node_view). */
static int core_allowed(const void *context, int c)
{
    const node_view *view = context;
    return cpu_allowed(view->host, view->node->cpus[c]);
}

/* The cores (indices in the node's cpulist) of a node that the process may use, as "0-3,8", or "". */
static const char *allowed_cores(const host_info *host, const node_info *node, char *out, size_t size)
{
    const node_view view = {host, node};
    return id_list(&view, node->ncpus, core_allowed, out, size);
}

/*
 * Check every thread can be placed; fill in its CPU.  Dies with one line otherwise.
 * check_cpus: refuse CPUs outside the process's affinity (the CPUs of the sysfs
 * tree are this kernel's); check_mems: refuse memory nodes outside Mems_allowed
 * (the nodes of the sysfs tree are this kernel's).
 */
static void resolve_specs(const host_info *host, thread_spec *specs, int count, int check_cpus, int check_mems)
{
    char list[512], allowed[256], cores[256];
    if (count > host->ncpus)
        die_user("%d thread%s but this host has only %d CPU%s", count, count == 1 ? "" : "s", host->ncpus,
                 host->ncpus == 1 ? "" : "s");
    for (int i = 0; i < count; i++) {
        thread_spec *s = &specs[i];
        int index = node_index(host, s->node);
        if (index < 0)
            die_user("'%s': no node %d on this host (nodes %s)", s->label, s->node,
                     node_list(host, NODES_ALL, list, sizeof list));
        const node_info *node = &host->nodes[index];
        if (node->ncpus == 0)
            die_user("'%s': node %d has no CPUs; nodes with CPUs: %s", s->label, s->node,
                     node_list(host, NODES_WITH_CPUS, list, sizeof list));
        if (s->core >= node->ncpus)
            die_user("'%s': node %d has %d CPUs (cores 0..%d), no core %d", s->label, s->node, node->ncpus,
                     node->ncpus - 1, s->core);
        s->cpu = node->cpus[s->core];
        if (check_cpus && !cpu_allowed(host, s->cpu)) {
            allowed_cores(host, node, cores, sizeof cores);
            die_user("'%s': CPU %d (node %d core %d) is not allowed to this process (allowed CPUs: %s; a cpuset or"
                     " CPU affinity restricts it); %s%s", s->label, s->cpu, s->node, s->core,
                     allowed_cpu_list(host, allowed, sizeof allowed),
                     cores[0] ? "allowed cores of this node: " : "no core of this node is allowed", cores);
        }
        int mem_index = node_index(host, s->mem_node);
        if (mem_index < 0)
            die_user("'%s': no memory node %d on this host (nodes %s)", s->label, s->mem_node,
                     node_list(host, NODES_ALL, list, sizeof list));
        if (host->nodes[mem_index].memory_total_bytes == 0)
            die_user("'%s': node %d has no memory; nodes with memory: %s", s->label, s->mem_node,
                     node_list(host, NODES_WITH_MEMORY, list, sizeof list));
        if (check_mems && !mem_allowed(host, s->mem_node))
            die_user("'%s': node %d is not among the memory nodes this process may use (Mems_allowed: %s; a cpuset"
                     " restricts it)", s->label, s->mem_node, allowed_mem_list(host, allowed, sizeof allowed));
        for (int j = 0; j < i; j++)
            if (specs[j].cpu == s->cpu)
                die_user("'%s': CPU %d (node %d core %d) already runs '%s'; one thread per core", s->label,
                         s->cpu, s->node, s->core, specs[j].label);
    }
}

/* Refuse arrays that do not fit in their node's free memory. */
static void check_free_memory(const host_info *host, const thread_spec *specs, int count, long long array_bytes)
{
    for (int n = 0; n < host->nnodes; n++) {
        const node_info *node = &host->nodes[n];
        /* in double: a size near the limit of long long times three arrays per thread would overflow */
        double need = 0.0;
        for (int i = 0; i < count; i++)
            if (specs[i].mem_node == node->id)
                need += (double)array_bytes * specs[i].arrays;
        if (need == 0.0 || node->memory_free_bytes < 0)
            continue;
        if (need > (double)node->memory_free_bytes) {
            char need_text[32], free_text[32];
            die_user("arrays on node %d need %s but node %d has %s free (%s)", node->id,
                     format_bytes(need, need_text, sizeof need_text), node->id,
                     format_bytes(node->memory_free_bytes, free_text, sizeof free_text), node->free_source);
        }
    }
}

/* ----------------------------------------------------------------- options */

/* --pages: huge for the latency chase and base for the streaming ops (auto), or one for all. */
enum { PAGES_AUTO, PAGES_HUGE, PAGES_BASE };
static const char *const PAGES_NAMES[] = {"auto", "huge", "base"};

typedef struct {
    long long size_bytes; /* per array, whole pages */
    int size_given;
    int reps;
    int allow_misplaced;
    int first_touch;
    int resolve_only;
    int pages;             /* PAGES_AUTO, PAGES_HUGE or PAGES_BASE */
    const char *json_path; /* NULL: stdout */
    const char *sysfs_root;
    int argc;
    char **argv;
} run_options;

/* ------------------------------------------------------------------- time */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time the calling thread has used. */
static double thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_until(double when_seconds)
{
    struct timespec ts;
    ts.tv_sec = (time_t)when_seconds;
    ts.tv_nsec = (long)((when_seconds - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Hold the thread back until bytes_done at rate would have taken this long. */
static void pace(double start_seconds, double bytes_done, double rate_bytes_per_second, const atomic_int *stop)
{
    double target = start_seconds + bytes_done / rate_bytes_per_second;
    double now = now_seconds();
    /* in slices of at most a millisecond, so that a paced background thread stops soon after the foreground
       threads end, however slow its rate (at 1 MB/s a 64 KiB chunk is 65 ms) */
    while (target - now > 100e-6) {
        if (stop && atomic_load_explicit(stop, memory_order_relaxed))
            return;
        double until = target - 50e-6;
        sleep_until(until - now > 1e-3 ? now + 1e-3 : until);
        now = now_seconds();
    }
    while (now_seconds() < target)
        ;
}

/* --------------------------------------------------------------- placement */

typedef struct {
    long pages;            /* pages in the thread's arrays */
    long pages_on_node;    /* pages found on the intended node */
    long *pages_by_node;   /* per host node index */
    long pages_elsewhere;  /* absent, or on a node sysfs does not list */
    double fraction;       /* pages_on_node / pages; -1 when it could not be verified */
    char bind_method[16];  /* "mbind" or "first-touch" */
    char verify_method[16];/* "move_pages", "numa_maps" or "single-node" */
} placement_result;

static int pin_to_cpu(int cpu)
{
    cpu_set_t *set = CPU_ALLOC((size_t)cpu + 1);
    size_t size = CPU_ALLOC_SIZE((size_t)cpu + 1);
    if (!set)
        return ENOMEM;
    CPU_ZERO_S(size, set);
    CPU_SET_S((size_t)cpu, size, set);
    int status = sched_setaffinity(0, size, set) == 0 ? 0 : errno;
    CPU_FREE(set);
    return status;
}

#define MASK_WORD_BITS (8 * sizeof(unsigned long))

/* mbind the range to one node; returns 0 or errno.  The policy is read back with get_mempolicy. */
static int bind_to_node(void *addr, size_t bytes, int node)
{
    unsigned long mask[NODEMASK_BITS / MASK_WORD_BITS];
    const size_t word = (size_t)node / MASK_WORD_BITS;
    const unsigned long bit = 1UL << ((size_t)node % MASK_WORD_BITS);
    if (node < 0 || node > NODEMASK_BITS - 2)
        return EINVAL;
    memset(mask, 0, sizeof mask);
    mask[word] = bit;
    if (syscall(SYS_mbind, addr, bytes, MPOL_BIND, mask, (unsigned long)NODEMASK_BITS, 0UL) != 0)
        return errno;
    int mode = -1;
    memset(mask, 0, sizeof mask);
    if (syscall(SYS_get_mempolicy, &mode, mask, (unsigned long)NODEMASK_BITS, addr, (unsigned long)MPOL_F_ADDR) != 0)
        return errno;
    if (mode != MPOL_BIND || !(mask[word] & bit))
        return EINVAL;
    return 0;
}

static void count_page_node(const host_info *host, placement_result *placement, int status, int intended)
{
    int index = status >= 0 ? node_index(host, status) : -1;
    if (index < 0) {
        placement->pages_elsewhere++;
        return;
    }
    placement->pages_by_node[index]++;
    if (status == intended)
        placement->pages_on_node++;
}

/* Count the node of every page with move_pages(0, n, pages, NULL, status, 0); 0 or errno. */
static int verify_with_move_pages(const host_info *host, char *addr, size_t bytes, int intended,
                                  placement_result *placement)
{
    size_t page = (size_t)host->page_bytes, count = bytes / page;
    void **pages = xcalloc(MOVE_PAGES_BATCH, sizeof *pages);
    int *status = xcalloc(MOVE_PAGES_BATCH, sizeof *status);
    int error = 0;
    for (size_t first = 0; first < count && !error; first += MOVE_PAGES_BATCH) {
        size_t n = count - first < MOVE_PAGES_BATCH ? count - first : MOVE_PAGES_BATCH;
        for (size_t i = 0; i < n; i++) {
            pages[i] = addr + (first + i) * page;
            status[i] = -1;
        }
        if (syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL, status, 0) != 0) {
            error = errno;
            break;
        }
        for (size_t i = 0; i < n; i++)
            count_page_node(host, placement, status[i], intended);
    }
    free(pages);
    free(status);
    return error;
}

/* Count pages per node from the mapping's line in /proc/self/numa_maps; 0 or errno. */
static int verify_with_numa_maps(const host_info *host, char *addr, size_t bytes, int intended,
                                 placement_result *placement)
{
    char *maps = read_whole("/proc/self/numa_maps");
    if (!maps)
        return ENOENT;
    int found = 0;
    long counted = 0;
    for (char *line = maps; line && *line && !found; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if ((uintptr_t)strtoull(line, NULL, 16) != (uintptr_t)addr)
            continue;
        found = 1;
        size_t length = strcspn(line, "\n");
        char *end = line + length;
        for (char *p = line; p < end; p++) {
            if (*p != 'N' || (p > line && p[-1] != ' ') || !isdigit((unsigned char)p[1]))
                continue;
            char *after;
            long node = strtol(p + 1, &after, 10);
            if (*after != '=')
                continue;
            long pages = strtol(after + 1, NULL, 10);
            int index = node_index(host, (int)node);
            if (index >= 0)
                placement->pages_by_node[index] += pages;
            if (node == intended)
                placement->pages_on_node += pages;
            counted += pages;
        }
    }
    free(maps);
    if (!found)
        return ENOENT;
    long expected = (long)(bytes / (size_t)host->page_bytes);
    placement->pages_elsewhere += expected > counted ? expected - counted : 0;
    return 0;
}

/* --------------------------------------------------------------- workers */

typedef struct {
    thread_spec spec;
    const host_info *host;
    const run_options *options;
    int index;
    pthread_t thread;
    size_t array_bytes;   /* per array */
    size_t lines;         /* 64-byte lines per array */
    char *mappings[3];    /* each array with a guard page on either side */
    size_t mapping_bytes;
    char *arrays[3];
    placement_result placement;
    char advice[16];      /* madvise applied to the arrays: "hugepage", "nohugepage", or "none" (MADV_HUGEPAGE failed) */
    int advice_error;     /* errno of a failed madvise(MADV_HUGEPAGE), else 0 */
    long long huge_bytes; /* bytes of the arrays on huge pages before the first repetition; -1 unknown */
    double *seconds;      /* per repetition */
    double *bytes;        /* per repetition */
    double *started;      /* per repetition, monotonic seconds */
    double *finished;
    double *cpu_share;    /* per repetition: CPU seconds / wall seconds of the walk */
    void *chase_position;
    volatile uint64_t sink; /* keeps every loaded value alive */
    int strayed_cpu;      /* a CPU sched_getcpu found the thread on instead of its own (-1: never) */
    int strayed_rep;      /* the repetition it was found there */
    int moved_pages;      /* its first-touch pages moved while it ran (recheck_placement): a condition of the
                             machine's settings, reported as a refusal, not as a failure of the benchmark */
    char error[512];
} worker;

static pthread_barrier_t phase_barrier;
static atomic_int foreground_left;
static atomic_int stop_background;
static atomic_int abort_run;

static void worker_error(worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void worker_error(worker *w, const char *fmt, ...)
{
    if (w->error[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->error, sizeof w->error, fmt, ap);
    va_end(ap);
}

/* Whether the kernel offers transparent huge pages to a region that asks for them. */
static int thp_available(const host_info *host)
{
    return host->huge_page_bytes > 0 && (strcmp(host->thp_mode, "always") == 0 || strcmp(host->thp_mode, "madvise") == 0);
}

/*
 * Advise the pages of one array before its first touch: MADV_HUGEPAGE when
 * huge pages are requested and the kernel offers them, else MADV_NOHUGEPAGE
 * (a kernel in THP mode "always" would otherwise give huge pages to arrays
 * meant for base pages, and the report would not say what sysfs says).
 */
static void advise_pages(worker *w, char *array)
{
    if (w->spec.huge && thp_available(w->host)) {
        if (madvise(array, w->array_bytes, MADV_HUGEPAGE) != 0) {
            if (!w->advice_error)
                w->advice_error = errno;
            snprintf(w->advice, sizeof w->advice, "none"); /* what the kernel's THP mode gives; a warning says why */
        } else if (!w->advice_error) {
            snprintf(w->advice, sizeof w->advice, "hugepage");
        }
    } else {
        snprintf(w->advice, sizeof w->advice, "nohugepage");
        (void)madvise(array, w->array_bytes, MADV_NOHUGEPAGE); /* EINVAL without THP: base pages anyway */
    }
}

/*
 * mmap every array with PROT_NONE guard pages, so no two arrays share a
 * mapping.  An array on huge pages starts on a huge page boundary (the
 * mapping reserves the slack, which stays inaccessible and unbacked).
 */
static int map_arrays(worker *w)
{
    size_t page = (size_t)w->host->page_bytes;
    size_t align = w->spec.huge && thp_available(w->host) ? (size_t)w->host->huge_page_bytes : page;
    w->mapping_bytes = w->array_bytes + 2 * page + (align - page);
    for (int a = 0; a < w->spec.arrays; a++) {
        char *base = mmap(NULL, w->mapping_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (base == MAP_FAILED) {
            worker_error(w, "'%s': cannot map %zu bytes: %s", w->spec.label, w->array_bytes, strerror(errno));
            return -1;
        }
        w->mappings[a] = base;
        uintptr_t first = (uintptr_t)base + page;
        w->arrays[a] = (char *)((first + align - 1) / align * align);
        if (mprotect(w->arrays[a], w->array_bytes, PROT_READ | PROT_WRITE) != 0) {
            worker_error(w, "'%s': cannot map %zu bytes: %s", w->spec.label, w->array_bytes, strerror(errno));
            return -1;
        }
        advise_pages(w, w->arrays[a]);
    }
    return 0;
}

/*
 * Bytes of the arrays backed by huge pages: AnonHugePages of the mappings
 * inside each array in /proc/self/smaps.  -1 when smaps cannot be read or
 * does not list the arrays.
 */
static long long measure_huge_bytes(const worker *w)
{
    char *smaps = read_whole("/proc/self/smaps");
    if (!smaps)
        return -1;
    long long total = 0;
    int found = 0, inside = 0;
    for (char *line = smaps; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char *end;
        unsigned long long start = strtoull(line, &end, 16);
        if (end != line && *end == '-') {
            unsigned long long stop = strtoull(end + 1, NULL, 16);
            inside = 0;
            for (int a = 0; a < w->spec.arrays; a++) {
                uintptr_t first = (uintptr_t)w->arrays[a], last = first + w->array_bytes;
                if (start >= first && stop <= last)
                    inside = 1;
            }
            found |= inside;
        } else if (inside && strncmp(line, "AnonHugePages:", 14) == 0) {
            total += strtoll(line + 14, NULL, 10) * 1024LL;
        }
    }
    free(smaps);
    return found ? total : -1;
}

/* Bind every array to the memory node; fall back to first touch where mbind is not permitted. */
static int bind_arrays(worker *w)
{
    snprintf(w->placement.bind_method, sizeof w->placement.bind_method, "mbind");
    if (w->options->first_touch) {
        snprintf(w->placement.bind_method, sizeof w->placement.bind_method, "first-touch");
        return 0;
    }
    for (int a = 0; a < w->spec.arrays; a++) {
        int error = bind_to_node(w->arrays[a], w->array_bytes, w->spec.mem_node);
        if (error == EPERM || error == ENOSYS) {
            snprintf(w->placement.bind_method, sizeof w->placement.bind_method, "first-touch");
            return 0;
        }
        if (error) {
            worker_error(w, "'%s': cannot bind memory to node %d: mbind: %s", w->spec.label, w->spec.mem_node,
                         strerror(error));
            return -1;
        }
    }
    return 0;
}

static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

/* Link the lines into one random cycle (Sattolo's algorithm): word 0 of each line points to the next. */
static int build_chase(worker *w)
{
    size_t n = w->lines;
    size_t *order = malloc(n * sizeof *order);
    if (!order) {
        worker_error(w, "'%s': out of memory building the latency chain", w->spec.label);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t state = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(w->index + 1) * 0xBF58476D1CE4E5B9ULL;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(next_random(&state) % i);
        size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    char *base = w->arrays[0];
    for (size_t i = 0; i < n; i++)
        *(void **)(base + i * LINE_BYTES) = base + order[i] * LINE_BYTES;
    free(order);
    w->chase_position = base;
    return 0;
}

/* Write every page (first touch), with the op's initial values. */
static int fill_arrays(worker *w)
{
    size_t words = w->array_bytes / 8;
    switch (w->spec.op) {
    case 'r': {
        uint64_t *a = (uint64_t *)w->arrays[0];
        for (size_t i = 0; i < words; i++)
            a[i] = i * 0x9E3779B97F4A7C15ULL;
        return 0;
    }
    case 'w':
        memset(w->arrays[0], 0, w->array_bytes);
        return 0;
    case 't': {
        double *a = (double *)w->arrays[0], *b = (double *)w->arrays[1], *c = (double *)w->arrays[2];
        for (size_t i = 0; i < words; i++) {
            a[i] = 0.0;
            b[i] = 1.0;
            c[i] = 2.0;
        }
        return 0;
    }
    default:
        return build_chase(w);
    }
}

/* Touch the arrays; under first-touch placement, from a CPU of the memory node. */
static int touch_arrays(worker *w)
{
    int touch_cpu = w->spec.cpu;
    if (strcmp(w->placement.bind_method, "first-touch") == 0 && w->spec.mem_node != w->spec.node) {
        const node_info *mem = &w->host->nodes[node_index(w->host, w->spec.mem_node)];
        touch_cpu = -1;
        for (int c = 0; c < mem->ncpus && touch_cpu < 0; c++)
            if (cpu_allowed(w->host, mem->cpus[c]))
                touch_cpu = mem->cpus[c];
        if (touch_cpu < 0) {
            worker_error(w, "'%s': mbind is not permitted and node %d has no CPU %sto place its memory by first touch",
                         w->spec.label, w->spec.mem_node, mem->ncpus ? "this process may use " : "");
            return -1;
        }
    }
    int error = touch_cpu != w->spec.cpu ? pin_to_cpu(touch_cpu) : 0;
    if (error) {
        worker_error(w, "'%s': cannot run on CPU %d of node %d to place memory: %s", w->spec.label, touch_cpu,
                     w->spec.mem_node, strerror(error));
        return -1;
    }
    int status = fill_arrays(w);
    error = touch_cpu != w->spec.cpu ? pin_to_cpu(w->spec.cpu) : 0;
    if (error) {
        worker_error(w, "'%s': cannot run on CPU %d: %s", w->spec.label, w->spec.cpu, strerror(error));
        return -1;
    }
    return status;
}

static int verify_arrays(worker *w)
{
    placement_result *p = &w->placement;
    const host_info *host = w->host;
    p->pages_by_node = xcalloc((size_t)host->nnodes, sizeof *p->pages_by_node);
    p->pages = (long)(w->array_bytes / (size_t)host->page_bytes) * w->spec.arrays;
    const char *methods[] = {"move_pages", "numa_maps"};
    for (int m = 0; m < 2; m++) {
        int error = 0;
        memset(p->pages_by_node, 0, (size_t)host->nnodes * sizeof *p->pages_by_node);
        p->pages_on_node = p->pages_elsewhere = 0;
        for (int a = 0; a < w->spec.arrays && !error; a++)
            error = m == 0 ? verify_with_move_pages(host, w->arrays[a], w->array_bytes, w->spec.mem_node, p)
                           : verify_with_numa_maps(host, w->arrays[a], w->array_bytes, w->spec.mem_node, p);
        if (!error) {
            snprintf(p->verify_method, sizeof p->verify_method, "%s", methods[m]);
            p->fraction = (double)p->pages_on_node / (double)p->pages;
            return 0;
        }
    }
    memset(p->pages_by_node, 0, (size_t)host->nnodes * sizeof *p->pages_by_node);
    if (host->nnodes == 1) {
        snprintf(p->verify_method, sizeof p->verify_method, "single-node");
        p->pages_on_node = p->pages_by_node[0] = p->pages;
        p->pages_elsewhere = 0;
        p->fraction = 1.0;
        return 0;
    }
    snprintf(p->verify_method, sizeof p->verify_method, "none");
    p->fraction = -1.0;
    if (!w->options->allow_misplaced) {
        worker_error(w, "'%s': cannot verify the placement (move_pages and /proc/self/numa_maps unavailable);"
                        " use --allow-misplaced to run anyway", w->spec.label);
        return -1;
    }
    return 0;
}

static void describe_placement(const worker *w, char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; i < w->host->nnodes; i++) {
        long pages = w->placement.pages_by_node[i];
        if (pages == 0)
            continue;
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%.1f%% on node %d", used ? ", " : "",
                 100.0 * (double)pages / (double)w->placement.pages, w->host->nodes[i].id);
    }
    if (w->placement.pages_elsewhere) {
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%.1f%% not resident", used ? ", " : "",
                 100.0 * (double)w->placement.pages_elsewhere / (double)w->placement.pages);
    }
}

static int check_placement(worker *w)
{
    const placement_result *p = &w->placement;
    if (p->fraction < 0 || p->fraction >= PLACEMENT_REQUIRED || w->options->allow_misplaced)
        return 0;
    char where[256];
    describe_placement(w, where, sizeof where);
    worker_error(w, "'%s': only %.1f%% of the array's pages are on node %d (%s; placed by %s); "
                    "use --allow-misplaced to run anyway", w->spec.label, 100.0 * p->fraction, w->spec.mem_node,
                 where, p->bind_method);
    return -1;
}

/* Pin, allocate, bind, touch and verify: everything before the first timed repetition. */
static void prepare_worker(worker *w)
{
    int error = pin_to_cpu(w->spec.cpu);
    if (error) {
        worker_error(w, "'%s': cannot run on CPU %d (node %d core %d): %s", w->spec.label, w->spec.cpu,
                     w->spec.node, w->spec.core, strerror(error));
        return;
    }
    int seen = sched_getcpu();
    if (seen >= 0 && seen != w->spec.cpu) {
        worker_error(w, "'%s': pinned to CPU %d (node %d core %d) but running on CPU %d", w->spec.label, w->spec.cpu,
                     w->spec.node, w->spec.core, seen);
        return;
    }
    if (map_arrays(w) || bind_arrays(w) || touch_arrays(w) || verify_arrays(w))
        return;
    w->huge_bytes = measure_huge_bytes(w);
    check_placement(w);
}

/* ---------------------------------------------------------------- kernels */

static uint64_t read_lines(const uint64_t *words, size_t first_line, size_t end_line)
{
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t line = first_line;
    for (; line + 4 <= end_line; line += 4) {
        s0 += words[line * WORDS_PER_LINE];
        s1 += words[(line + 1) * WORDS_PER_LINE];
        s2 += words[(line + 2) * WORDS_PER_LINE];
        s3 += words[(line + 3) * WORDS_PER_LINE];
    }
    for (; line < end_line; line++)
        s0 += words[line * WORDS_PER_LINE];
    return s0 + s1 + s2 + s3;
}

static void write_lines(uint64_t *words, size_t first_line, size_t end_line, uint64_t value)
{
    for (size_t line = first_line; line < end_line; line++)
        words[line * WORDS_PER_LINE] = value + line;
    __asm__ __volatile__("" : : "r"(words) : "memory");
}

/* The triad's scalar of a pass: another each pass (an integer, exact in a double), so that a pass whose stores were
   lost leaves the previous pass's values, which check_writes tells apart. */
static double triad_scalar(uint64_t pass_value)
{
    return (double)(pass_value >> 32);
}

static void triad_lines(double *a, const double *b, const double *c, size_t first_line, size_t end_line,
                        double scalar)
{
    for (size_t i = first_line * WORDS_PER_LINE; i < end_line * WORDS_PER_LINE; i++)
        a[i] = b[i] + scalar * c[i];
    __asm__ __volatile__("" : : "r"(a) : "memory");
}

static void *chase_lines(void *position, size_t steps)
{
    while (steps--)
        position = *(void *volatile *)position;
    return position;
}

static void run_chunk(worker *w, size_t first_line, size_t end_line, uint64_t pass_value)
{
    switch (w->spec.op) {
    case 'r':
        w->sink += read_lines((const uint64_t *)w->arrays[0], first_line, end_line);
        break;
    case 'w':
        write_lines((uint64_t *)w->arrays[0], first_line, end_line, pass_value);
        break;
    case 't':
        triad_lines((double *)w->arrays[0], (const double *)w->arrays[1], (const double *)w->arrays[2],
                    first_line, end_line, triad_scalar(pass_value));
        break;
    default:
        w->chase_position = chase_lines(w->chase_position, end_line - first_line);
        break;
    }
}

/* The stores of a foreground pass must have happened: check the first and last line. */
static void check_writes(worker *w, uint64_t pass_value)
{
    size_t last = (w->lines - 1) * WORDS_PER_LINE;
    if (w->spec.op == 'w') {
        const uint64_t *words = (const uint64_t *)w->arrays[0];
        if (words[0] != pass_value || words[last] != pass_value + w->lines - 1)
            worker_error(w, "'%s': the written values are not in memory", w->spec.label);
    } else if (w->spec.op == 't') {
        const double *a = (const double *)w->arrays[0];
        const double expected = 1.0 + 2.0 * triad_scalar(pass_value);   /* b = 1, c = 2 */
        if (a[0] != expected || a[last] != expected)
            worker_error(w, "'%s': the triad results are not in memory", w->spec.label);
    }
}

/*
 * One timed repetition.  Foreground threads walk their array once; background
 * threads walk it round and round until the last foreground thread is done.
 */
static void run_repetition(worker *w, int rep)
{
    const int background = w->spec.background;
    const double rate = w->spec.rate_bytes_per_second;
    const double bytes_per_line = (double)LINE_BYTES * w->spec.arrays;
    uint64_t pass_value = ((uint64_t)rep + 1) << 40;
    size_t line = 0;
    double bytes_done = 0.0;
    if (w->spec.op == 'l')
        w->chase_position = w->arrays[0];
    const int cpu_before = sched_getcpu();
    const double start = now_seconds();
    const double cpu_start = thread_cpu_seconds();
    for (;;) {
        size_t end = line + CHUNK_LINES < w->lines ? line + CHUNK_LINES : w->lines;
        run_chunk(w, line, end, pass_value);
        bytes_done += (double)(end - line) * bytes_per_line;
        line = end;
        if (rate > 0)
            pace(start, bytes_done, rate, background ? &stop_background : NULL);
        if (line == w->lines) {
            if (!background)
                break;
            line = 0;
            pass_value += 1ULL << 32;
        }
        if (background && atomic_load_explicit(&stop_background, memory_order_relaxed))
            break;
    }
    const double finish = now_seconds();
    const double cpu_used = thread_cpu_seconds() - cpu_start;
    const int cpu_after = sched_getcpu();
    if (w->strayed_cpu < 0 && ((cpu_before >= 0 && cpu_before != w->spec.cpu) ||
                               (cpu_after >= 0 && cpu_after != w->spec.cpu))) {
        w->strayed_cpu = cpu_before >= 0 && cpu_before != w->spec.cpu ? cpu_before : cpu_after;
        w->strayed_rep = rep;
    }
    w->sink += (uint64_t)(uintptr_t)w->chase_position;
    w->cpu_share[rep] = finish > start ? cpu_used / (finish - start) : 1.0;
    w->started[rep] = start;
    w->finished[rep] = finish;
    w->seconds[rep] = finish - start;
    w->bytes[rep] = bytes_done;
    if (!background) {
        check_writes(w, pass_value);
        if (atomic_fetch_sub(&foreground_left, 1) == 1)
            atomic_store(&stop_background, 1);
    }
}

/* Pages placed by first touch (where mbind is not allowed, or --first-touch) may move while the thread runs: the
   kernel's NUMA balancing migrates them towards the CPU that uses them.  Checked again after the last repetition,
   so that a report never claims a placement its timings did not have; bound pages do not move. */
static void recheck_placement(worker *w)
{
    placement_result *p = &w->placement;
    if (strcmp(p->bind_method, "first-touch") != 0 || w->host->nnodes == 1 || p->fraction < 0 ||
        w->options->allow_misplaced)
        return;
    double before = p->fraction;
    free(p->pages_by_node);
    if (verify_arrays(w) || p->fraction >= PLACEMENT_REQUIRED)
        return;
    char where[256];
    describe_placement(w, where, sizeof where);
    w->moved_pages = 1;
    worker_error(w, "'%s': after the run only %.1f%% of the array's pages were on node %d (%.1f%% before; %s):"
                    " placed by first touch, they moved while it ran (the kernel's NUMA balancing,"
                    " kernel.numa_balancing); run where mbind is allowed, or with NUMA balancing off",
                 w->spec.label, 100.0 * p->fraction, w->spec.mem_node, 100.0 * before, where);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    prepare_worker(w);
    pthread_barrier_wait(&phase_barrier); /* everyone prepared */
    pthread_barrier_wait(&phase_barrier); /* main decided whether to go on */
    if (atomic_load(&abort_run))
        return NULL;
    for (int rep = 0; rep < w->options->reps; rep++) {
        pthread_barrier_wait(&phase_barrier); /* start together */
        run_repetition(w, rep);
        pthread_barrier_wait(&phase_barrier); /* all done */
    }
    recheck_placement(w);
    return NULL;
}

static void init_worker(worker *w, const thread_spec *spec, int index, const host_info *host,
                        const run_options *options)
{
    memset(w, 0, sizeof *w);
    w->spec = *spec;
    w->index = index;
    w->host = host;
    w->options = options;
    w->array_bytes = (size_t)options->size_bytes;
    w->lines = w->array_bytes / LINE_BYTES;
    w->huge_bytes = -1;
    w->strayed_cpu = -1;
    w->seconds = xcalloc((size_t)options->reps, sizeof(double));
    w->bytes = xcalloc((size_t)options->reps, sizeof(double));
    w->started = xcalloc((size_t)options->reps, sizeof(double));
    w->finished = xcalloc((size_t)options->reps, sizeof(double));
    w->cpu_share = xcalloc((size_t)options->reps, sizeof(double));
}

static void release_worker(worker *w)
{
    for (int a = 0; a < 3; a++)
        if (w->mappings[a])
            munmap(w->mappings[a], w->mapping_bytes);
    free(w->placement.pages_by_node);
    free(w->seconds);
    free(w->bytes);
    free(w->started);
    free(w->finished);
    free(w->cpu_share);
}

/* Start the threads, stop on the first preparation error, then time every repetition. */
static void run_workers(worker *workers, int count, const run_options *options)
{
    int foreground = 0;
    for (int i = 0; i < count; i++)
        foreground += !workers[i].spec.background;
    if (pthread_barrier_init(&phase_barrier, NULL, (unsigned)count + 1) != 0)
        die_system("cannot create a barrier");
    atomic_store(&abort_run, 0);
    for (int i = 0; i < count; i++) {
        int error = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
        if (error)
            die_system("cannot start thread %d: %s", i, strerror(error));
    }
    pthread_barrier_wait(&phase_barrier);
    const char *failure = NULL;
    for (int i = 0; i < count && !failure; i++)
        if (workers[i].error[0])
            failure = workers[i].error;
    atomic_store(&abort_run, failure != NULL);
    pthread_barrier_wait(&phase_barrier);
    for (int rep = 0; rep < options->reps && !failure; rep++) {
        atomic_store(&foreground_left, foreground);
        atomic_store(&stop_background, 0);
        pthread_barrier_wait(&phase_barrier);
        pthread_barrier_wait(&phase_barrier);
    }
    for (int i = 0; i < count; i++)
        pthread_join(workers[i].thread, NULL);
    pthread_barrier_destroy(&phase_barrier);
    if (failure)
        die_user("%s", failure);
    for (int i = 0; i < count; i++)
        if (workers[i].strayed_cpu >= 0)
            die_user("'%s': ran on CPU %d in repetition %d, not on its CPU %d: its CPU affinity was changed while it"
                     " ran (a cpuset update?), so the timings are not of the requested placement", workers[i].spec.label,
                     workers[i].strayed_cpu, workers[i].strayed_rep + 1, workers[i].spec.cpu);
    for (int i = 0; i < count; i++)
        if (workers[i].error[0] && workers[i].moved_pages)
            die_user("%s", workers[i].error);
    for (int i = 0; i < count; i++)
        if (workers[i].error[0])
            die_system("%s", workers[i].error);
}

/* -------------------------------------------------------------- statistics */

typedef struct {
    double min, median, max;
} summary;

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static summary summarize(const double *values, int count)
{
    double *sorted = xcalloc((size_t)count, sizeof *sorted);
    memcpy(sorted, values, (size_t)count * sizeof *sorted);
    qsort(sorted, (size_t)count, sizeof *sorted, compare_doubles);
    summary s;
    s.min = sorted[0];
    s.max = sorted[count - 1];
    s.median = count % 2 ? sorted[count / 2] : 0.5 * (sorted[count / 2 - 1] + sorted[count / 2]);
    free(sorted);
    return s;
}

/* ---------------------------------------------------------------- warnings */

typedef struct {
    char **items;
    int count;
} warning_list;

static void add_warning(warning_list *list, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_warning(warning_list *list, const char *fmt, ...)
{
    char text[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    char **grown = realloc(list->items, (size_t)(list->count + 1) * sizeof *grown);
    if (!grown)
        die_system("out of memory");
    list->items = grown;
    list->items[list->count++] = strdup(text);
}

/* Bytes of a thread's arrays that huge pages can back: the whole huge pages of each (aligned) array. */
static long long huge_capacity(const worker *w)
{
    long long huge = w->host->huge_page_bytes;
    if (huge <= 0)
        return 0;
    return (long long)w->array_bytes / huge * huge * w->spec.arrays;
}

/* Why a thread that asked for huge pages runs (partly) on base pages, if it does. */
static void huge_page_warning(const worker *w, warning_list *list)
{
    const host_info *host = w->host;
    char base[32], huge[32], size[32];
    const char *label = w->spec.label;
    const char *tlb = w->spec.op == 'l' ? " (the chase's latency includes TLB misses)" : "";
    format_bytes(host->page_bytes, base, sizeof base);
    if (!thp_available(host)) {
        if (!host->thp_mode[0])
            add_warning(list, "'%s': huge pages requested but this kernel offers no transparent huge pages (nothing"
                              " in %s/kernel/mm/transparent_hugepage): its arrays are on %s pages%s", label,
                        host->sysfs_root, base, tlb);
        else if (strcmp(host->thp_mode, "always") != 0 && strcmp(host->thp_mode, "madvise") != 0)
            add_warning(list, "'%s': huge pages requested but transparent huge pages are disabled ('%s' in"
                              " %s/kernel/mm/transparent_hugepage/enabled): its arrays are on %s pages%s", label,
                        host->thp_mode, host->sysfs_root, base, tlb);
        else
            add_warning(list, "'%s': huge pages requested but the huge page size is unknown (no"
                              " %s/kernel/mm/transparent_hugepage/hpage_pmd_size): its arrays are on %s pages%s",
                        label, host->sysfs_root, base, tlb);
        return;
    }
    if (w->advice_error) {
        add_warning(list, "'%s': huge pages requested but madvise(MADV_HUGEPAGE) failed (%s): its arrays are on %s"
                          " pages%s", label, strerror(w->advice_error), base, tlb);
        return;
    }
    long long capacity = huge_capacity(w);
    format_bytes(host->huge_page_bytes, huge, sizeof huge);
    if (capacity == 0)
        add_warning(list, "'%s': huge pages requested but arrays of %s are smaller than one %s huge page: its arrays"
                          " are on %s pages%s", label, format_bytes((long long)w->array_bytes, size, sizeof size),
                    huge, base, tlb);
    else if (w->huge_bytes < 0)
        add_warning(list, "'%s': huge pages requested but how many the kernel granted could not be read from"
                          " /proc/self/smaps", label);
    else if ((double)w->huge_bytes < HUGE_REQUIRED * (double)capacity)
        add_warning(list, "'%s': huge pages requested but the kernel granted them for only %.1f%% of its arrays"
                          " (memory may be short or fragmented): the rest is on %s pages%s", label,
                    100.0 * (double)w->huge_bytes / (double)(w->array_bytes * (size_t)w->spec.arrays), base, tlb);
}

static void collect_warnings(const worker *workers, int count, const host_info *host, const run_options *options,
                             warning_list *list)
{
    char size_text[32], llc_text[32];
    if (options->size_bytes < 4 * host->llc_bytes)
        add_warning(list, "arrays of %s are smaller than 4 x the %s last-level cache: they measure caches as well"
                          " as memory", format_bytes(options->size_bytes, size_text, sizeof size_text),
                    format_bytes(host->llc_bytes, llc_text, sizeof llc_text));
    for (int i = 0; i < count; i++) {
        const worker *w = &workers[i];
        if (strcmp(w->placement.bind_method, "first-touch") == 0 && !options->first_touch)
            add_warning(list, "'%s': mbind is not permitted here; memory was placed by first touch and verified",
                        w->spec.label);
        if (w->placement.fraction >= 0 && w->placement.fraction < PLACEMENT_REQUIRED)
            add_warning(list, "'%s': only %.1f%% of the pages are on node %d (--allow-misplaced)", w->spec.label,
                        100.0 * w->placement.fraction, w->spec.mem_node);
        if (w->placement.fraction < 0)
            add_warning(list, "'%s': placement not verified (--allow-misplaced)", w->spec.label);
        if (w->spec.huge)
            huge_page_warning(w, list);
        summary s = summarize(w->seconds, options->reps);
        double spread = s.min > 0 ? (s.max - s.min) / s.min : 0.0;
        if (!w->spec.background && spread > SPREAD_WARNING)
            add_warning(list, "'%s': repetitions spread %.1f%% (more than %.0f%%): the machine may not be quiet",
                        w->spec.label, 100.0 * spread, 100.0 * SPREAD_WARNING);
        summary share = summarize(w->cpu_share, options->reps);
        if (!w->spec.background && w->spec.rate_bytes_per_second == 0 && share.median < CPU_SHARE_WARNING)
            add_warning(list, "'%s': the thread ran only %.0f%% of the time on its CPU (median): other work"
                              " competed for it", w->spec.label, 100.0 * share.median);
    }
}

/* --------------------------------------------------------------------- JSON */

static void json_number_array(strbuf *sb, const double *values, int count)
{
    sb_printf(sb, "[");
    for (int i = 0; i < count; i++) {
        if (i)
            sb_printf(sb, ", ");
        sb_json_number(sb, values[i]);
    }
    sb_printf(sb, "]");
}

static void json_host(strbuf *sb, const host_info *host)
{
    sb_printf(sb, "  \"host\": {\n    \"cpu_model\": ");
    sb_json_string(sb, host->cpu_model);
    sb_printf(sb, ",\n    \"kernel\": {\"sysname\": ");
    sb_json_string(sb, host->uts.sysname);
    sb_printf(sb, ", \"release\": ");
    sb_json_string(sb, host->uts.release);
    sb_printf(sb, ", \"version\": ");
    sb_json_string(sb, host->uts.version);
    sb_printf(sb, ", \"machine\": ");
    sb_json_string(sb, host->uts.machine);
    sb_printf(sb, "},\n    \"sysfs\": ");
    sb_json_string(sb, host->sysfs_root);
    sb_printf(sb, ",\n    \"numa_visible\": %s,\n    \"cpus\": %d,\n    \"page_bytes\": %ld,\n    \"nodes\": [",
              host->numa_visible ? "true" : "false", host->ncpus, host->page_bytes);
    for (int i = 0; i < host->nnodes; i++) {
        const node_info *node = &host->nodes[i];
        sb_printf(sb, "%s\n      {\"id\": %d, \"cpus\": [", i ? "," : "", node->id);
        for (int c = 0; c < node->ncpus; c++)
            sb_printf(sb, "%s%d", c ? ", " : "", node->cpus[c]);
        sb_printf(sb, "], \"memory_bytes\": ");
        if (node->memory_total_bytes >= 0)
            sb_printf(sb, "%lld", node->memory_total_bytes);
        else
            sb_printf(sb, "null");
        sb_printf(sb, ", \"free_bytes\": ");
        if (node->memory_free_bytes >= 0)
            sb_printf(sb, "%lld}", node->memory_free_bytes);
        else
            sb_printf(sb, "null}");
    }
    sb_printf(sb, "\n    ],\n    \"distances\": ");
    if (!host->distances) {
        sb_printf(sb, "null");
    } else {
        sb_printf(sb, "[");
        for (int i = 0; i < host->nnodes; i++) {
            sb_printf(sb, "%s[", i ? ", " : "");
            for (int j = 0; j < host->nnodes; j++)
                sb_printf(sb, "%s%d", j ? ", " : "", host->distances[i * host->nnodes + j]);
            sb_printf(sb, "]");
        }
        sb_printf(sb, "]");
    }
    sb_printf(sb, ",\n    \"caches\": [");
    for (int i = 0; i < host->ncaches; i++) {
        sb_printf(sb, "%s{\"level\": %d, \"type\": ", i ? ", " : "", host->caches[i].level);
        sb_json_string(sb, host->caches[i].type);
        sb_printf(sb, ", \"size_bytes\": %lld}", host->caches[i].size_bytes);
    }
    sb_printf(sb, "],\n    \"llc_bytes\": %lld,\n    \"transparent_hugepage\": ", host->llc_bytes);
    if (host->thp_mode[0])
        sb_json_string(sb, host->thp_mode);
    else
        sb_printf(sb, "null");
    sb_printf(sb, ",\n    \"huge_page_bytes\": ");
    if (host->huge_page_bytes > 0)
        sb_printf(sb, "%lld", host->huge_page_bytes);
    else
        sb_printf(sb, "null");
    sb_printf(sb, ",\n    \"cpufreq_governor\": ");
    if (host->governor[0])
        sb_json_string(sb, host->governor);
    else
        sb_printf(sb, "null");
    sb_printf(sb, "\n  },\n");
}

static void json_header(strbuf *sb, const char *mode, const host_info *host, const run_options *options)
{
    char date[64];
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
    sb_printf(sb, "{\n  \"format\": \"%s\",\n  \"mode\": \"%s\",\n  \"date\": \"%s\",\n  \"command\": [", FORMAT_NAME,
              mode, date);
    for (int i = 0; i < options->argc; i++) {
        if (i)
            sb_printf(sb, ", ");
        sb_json_string(sb, options->argv[i]);
    }
    sb_printf(sb, "],\n");
    json_host(sb, host);
    sb_printf(sb, "  \"size_bytes\": %lld,\n  \"size_rule\": ", options->size_bytes);
    sb_json_string(sb, options->size_given ? "--size (rounded up to whole pages)"
                                           : "default: 4 x the last-level cache, at least 64 MiB, in whole 2 MiB");
    sb_printf(sb, ",\n  \"reps\": %d,\n  \"allow_misplaced\": %s,\n  \"pages\": \"%s\",\n", options->reps,
              options->allow_misplaced ? "true" : "false", PAGES_NAMES[options->pages]);
}

static void json_spec_fields(strbuf *sb, const thread_spec *s, long long array_bytes)
{
    sb_printf(sb, "\"spec\": ");
    sb_json_string(sb, s->label);
    sb_printf(sb, ", \"role\": \"%s\", \"node\": %d, \"core\": %d, \"cpu\": %d, \"op\": \"%c\", \"mem_node\": %d,"
                  " \"rate_GBps\": ",
              s->background ? "background" : "foreground", s->node, s->core, s->cpu, s->op, s->mem_node);
    if (s->rate_bytes_per_second > 0)
        sb_json_number(sb, s->rate_bytes_per_second / 1e9);
    else
        sb_printf(sb, "null");
    sb_printf(sb, ", \"arrays\": %d, \"array_bytes\": %lld", s->arrays, array_bytes);
}

static void json_placement(strbuf *sb, const worker *w)
{
    const placement_result *p = &w->placement;
    sb_printf(sb, "      \"placement\": {\"node\": %d, \"fraction\": ", w->spec.mem_node);
    if (p->fraction >= 0)
        sb_json_number(sb, p->fraction);
    else
        sb_printf(sb, "null");
    sb_printf(sb, ", \"pages\": %ld, \"pages_on_node\": %ld, \"pages_by_node\": {", p->pages, p->pages_on_node);
    int first = 1;
    for (int i = 0; i < w->host->nnodes; i++) {
        if (!p->pages_by_node[i])
            continue;
        sb_printf(sb, "%s\"%d\": %ld", first ? "" : ", ", w->host->nodes[i].id, p->pages_by_node[i]);
        first = 0;
    }
    sb_printf(sb, "}, \"pages_not_resident\": %ld, \"bind\": \"%s\", \"verify\": \"%s\"}", p->pages_elsewhere,
              p->bind_method, p->verify_method);
}

/*
 * The pages of a thread's arrays: what was requested and advised, the bytes
 * on huge pages when timing started, and the page size backing most of them.
 */
static void json_pages(strbuf *sb, const worker *w)
{
    const long long total = (long long)w->array_bytes * w->spec.arrays;
    sb_printf(sb, "      \"pages\": {\"requested\": \"%s\", \"advice\": \"%s\", \"huge_bytes\": ",
              w->spec.huge ? "huge" : "base", w->advice);
    if (w->huge_bytes < 0) {
        sb_printf(sb, "null, \"huge_fraction\": null, \"page_bytes\": ");
        if (strcmp(w->advice, "nohugepage") != 0)   /* huge pages may have been given: the size is not known */
            sb_printf(sb, "null}");
        else
            sb_printf(sb, "%ld}", w->host->page_bytes);
        return;
    }
    double fraction = total > 0 ? (double)w->huge_bytes / (double)total : 0.0;
    sb_printf(sb, "%lld, \"huge_fraction\": ", w->huge_bytes);
    sb_json_number(sb, fraction);
    sb_printf(sb, ", \"page_bytes\": %lld}", fraction >= 0.5 ? w->host->huge_page_bytes : (long long)w->host->page_bytes);
}

static void json_worker(strbuf *sb, const worker *w, int reps)
{
    summary sec = summarize(w->seconds, reps);
    summary moved = summarize(w->bytes, reps);
    double *rates = xcalloc((size_t)reps, sizeof *rates);
    for (int r = 0; r < reps; r++)
        rates[r] = w->seconds[r] > 0 ? w->bytes[r] / w->seconds[r] / 1e9 : 0.0;
    summary rate = summarize(rates, reps);
    double best_GBps = w->spec.background ? rate.max : moved.median / sec.min / 1e9;
    double median_GBps = w->spec.background ? rate.median : moved.median / sec.median / 1e9;
    double accesses = moved.median / LINE_BYTES;
    sb_printf(sb, "    {");
    json_spec_fields(sb, &w->spec, (long long)w->array_bytes);
    sb_printf(sb, ",\n      \"bytes\": %.0f, \"bytes_all\": ", moved.median);
    json_number_array(sb, w->bytes, reps);
    sb_printf(sb, ", \"accesses\": %.0f,\n      \"seconds\": {\"min\": ", accesses);
    sb_json_number(sb, sec.min);
    sb_printf(sb, ", \"median\": ");
    sb_json_number(sb, sec.median);
    sb_printf(sb, ", \"max\": ");
    sb_json_number(sb, sec.max);
    sb_printf(sb, ", \"all\": ");
    json_number_array(sb, w->seconds, reps);
    sb_printf(sb, "},\n      \"GBps\": {\"best\": ");
    sb_json_number(sb, best_GBps);
    sb_printf(sb, ", \"median\": ");
    sb_json_number(sb, median_GBps);
    sb_printf(sb, ", \"all\": ");
    json_number_array(sb, rates, reps);
    sb_printf(sb, "},\n      \"ns_per_access\": {\"best\": ");
    sb_json_positive(sb, best_GBps > 0 ? LINE_BYTES / best_GBps : 0.0);
    sb_printf(sb, ", \"median\": ");
    sb_json_positive(sb, median_GBps > 0 ? LINE_BYTES / median_GBps : 0.0);
    summary share = summarize(w->cpu_share, reps);
    sb_printf(sb, "},\n      \"cpu_share\": {\"min\": ");
    sb_json_number(sb, share.min);
    sb_printf(sb, ", \"median\": ");
    sb_json_number(sb, share.median);
    sb_printf(sb, ", \"all\": ");
    json_number_array(sb, w->cpu_share, reps);
    sb_printf(sb, "},\n      \"spread\": ");
    sb_json_number(sb, sec.min > 0 ? (sec.max - sec.min) / sec.min : 0.0);
    sb_printf(sb, ",\n");
    json_placement(sb, w);
    sb_printf(sb, ",\n");
    json_pages(sb, w);
    sb_printf(sb, ",\n      \"checksum\": %llu\n    }", (unsigned long long)(w->sink & 0xffffffffULL));
    free(rates);
}

/* Time from the first foreground start to the last foreground finish, per repetition. */
static void json_wall(strbuf *sb, const worker *workers, int count, int reps)
{
    double *wall = xcalloc((size_t)reps, sizeof *wall);
    for (int r = 0; r < reps; r++) {
        double first = 0, last = 0;
        int seen = 0;
        for (int i = 0; i < count; i++) {
            if (workers[i].spec.background)
                continue;
            if (!seen || workers[i].started[r] < first)
                first = workers[i].started[r];
            if (!seen || workers[i].finished[r] > last)
                last = workers[i].finished[r];
            seen = 1;
        }
        wall[r] = last - first;
    }
    summary s = summarize(wall, reps);
    sb_printf(sb, "  \"wall_seconds\": {\"min\": ");
    sb_json_number(sb, s.min);
    sb_printf(sb, ", \"median\": ");
    sb_json_number(sb, s.median);
    sb_printf(sb, ", \"all\": ");
    json_number_array(sb, wall, reps);
    sb_printf(sb, "},\n");
    free(wall);
}

static void json_warnings(strbuf *sb, const warning_list *warnings)
{
    sb_printf(sb, "  \"warnings\": [");
    for (int i = 0; i < warnings->count; i++) {
        sb_printf(sb, "%s\n    ", i ? "," : "");
        sb_json_string(sb, warnings->items[i]);
    }
    sb_printf(sb, "%s]\n}\n", warnings->count ? "\n  " : "");
}

/* The file a report written to ``path`` replaces: ``path``, or where a link there points (written into
   ``out``), so that the link is kept and the file it names is written, even one that does not exist yet. */
static const char *link_target(const char *path, char *out, size_t size)
{
    if (realpath(path, out))
        return out;
    struct stat st;
    char link[PATH_MAX];
    ssize_t n;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode) || (n = readlink(path, link, sizeof link - 1)) <= 0)
        return path;
    link[n] = '\0';
    const char *slash = strrchr(path, '/');
    int length = link[0] == '/' || !slash ? snprintf(out, size, "%s", link)
                                          : snprintf(out, size, "%.*s/%s", (int)(slash - path), path, link);
    return length >= 0 && (size_t)length < size ? out : path;
}

/* Write to the file through a temporary and a rename, or to stdout. */
static void emit(const strbuf *sb, const char *path)
{
    if (!path || strcmp(path, "-") == 0) {
        errno = 0;
        if (fwrite(sb->text, 1, sb->length, stdout) != sb->length || fflush(stdout) != 0)
            die_system("cannot write the report to standard output: %s", errno ? strerror(errno) : "short write");
        return;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {   /* a device or a pipe: written in place */
        FILE *f = fopen(path, "w");
        if (!f || fwrite(sb->text, 1, sb->length, f) != sb->length || fclose(f) != 0)
            die_system("cannot write %s: %s", path, strerror(errno));
        return;
    }
    char resolved[PATH_MAX];   /* a link to a file: the file it names is replaced, the link kept */
    const char *target = link_target(path, resolved, sizeof resolved);
    char temporary[PATH_MAX + 32];
    snprintf(temporary, sizeof temporary, "%s.tmp.%ld", target, (long)getpid());
    FILE *f = fopen(temporary, "w");
    if (!f)
        die_user("cannot write %s: %s", path, strerror(errno));
    int ok = fwrite(sb->text, 1, sb->length, f) == sb->length;
    ok &= fflush(f) == 0;
    ok &= fsync(fileno(f)) == 0;
    ok &= fclose(f) == 0;
    if (!ok || rename(temporary, target) != 0) {
        int error = errno;
        unlink(temporary);
        die_user("cannot write %s: %s", path, strerror(error));
    }
}

/* Refuse now, before anything runs, a --json path the report could not be written to. */
static void check_report_path(const char *path)
{
    if (!path || strcmp(path, "-") == 0)
        return;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        die_user("--json %s: a folder; give a file", path);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (access(path, W_OK) != 0)
            die_user("--json %s: cannot write: %s", path, strerror(errno));
        return;
    }
    char resolved[PATH_MAX], folder[PATH_MAX];
    snprintf(folder, sizeof folder, "%s", link_target(path, resolved, sizeof resolved));
    char *slash = strrchr(folder, '/');
    if (!slash)
        snprintf(folder, sizeof folder, ".");
    else
        slash[slash == folder] = '\0';   /* the folder it is in; "/" for a file at the root */
    if (access(folder, W_OK) != 0)
        die_user("--json %s: cannot write in %s: %s", path, folder, strerror(errno));
}

static void report_resolution(const host_info *host, const thread_spec *specs, int count, const run_options *options)
{
    strbuf sb = {0};
    json_header(&sb, "resolve", host, options);
    sb_printf(&sb, "  \"threads\": [");
    for (int i = 0; i < count; i++) {
        sb_printf(&sb, "%s\n    {", i ? "," : "");
        json_spec_fields(&sb, &specs[i], options->size_bytes);
        sb_printf(&sb, ", \"pages\": {\"requested\": \"%s\"}}", specs[i].huge ? "huge" : "base");
    }
    sb_printf(&sb, "\n  ]\n}\n");
    emit(&sb, options->json_path);
    free(sb.text);
}

static void report_run(const host_info *host, const worker *workers, int count, const run_options *options,
                       const warning_list *warnings)
{
    strbuf sb = {0};
    json_header(&sb, "run", host, options);
    json_wall(&sb, workers, count, options->reps);
    sb_printf(&sb, "  \"threads\": [\n");
    for (int i = 0; i < count; i++) {
        json_worker(&sb, &workers[i], options->reps);
        sb_printf(&sb, "%s\n", i + 1 < count ? "," : "");
    }
    sb_printf(&sb, "  ],\n");
    json_warnings(&sb, warnings);
    emit(&sb, options->json_path);
    free(sb.text);
}

/* ------------------------------------------------------------ command line */

static void print_help(void)
{
    printf("usage: stride [options] SPEC...\n"
           "\n"
           "Time threads walking arrays placed on chosen NUMA nodes; print JSON (simnuma-bench/2).\n"
           "\n"
           "SPEC is N.C.op.M[@RATE]: a thread on node N, on the C-th CPU of that node (sysfs\n"
           "cpulist order), over an array on node M.  op is one of\n"
           "  r  read one word per 64-byte line      w  write one word per line\n"
           "  t  STREAM triad a[i] = b[i] + s*c[i]   l  dependent loads in a random cycle (latency)\n"
           "@RATE (e.g. @0.5GB/s, @500MB/s) paces the thread to that demand.\n"
           "\n"
           "options:\n"
           "  --bg SPEC          a background thread: runs until the foreground threads end (repeatable)\n"
           "  --size BYTES       bytes per array (e.g. 64MiB); default 4 x the last-level cache, >= 64 MiB\n"
           "  --reps N           timed repetitions (default %d); min and median are reported\n"
           "  --allow-misplaced  run even if under 99%% of an array's pages are on its node\n"
           "  --first-touch      place memory by first touch from the memory node instead of mbind\n"
           "  --pages MODE       auto (default): huge pages for l, base pages for r, w, t; huge or base: for all\n"
           "  --json FILE        write the JSON to FILE (default: stdout)\n"
           "  --sysfs ROOT       read the topology from ROOT instead of /sys\n"
           "  --resolve          print the resolved placement (CPU of each thread) and exit\n"
           "  --help             this text\n"
           "\n"
           "Exit status 0 on success, 2 when the request cannot be honoured, 1 on system failures.\n",
           DEFAULT_REPS);
}

/* "--name VALUE" or "--name=VALUE"; returns the value or NULL when argv[*i] is not --name. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0')
        return NULL;
    if (*i + 1 >= argc)
        die_user("%s needs a value; see --help", name);
    return argv[++*i];
}

static int parse_reps(const char *text)
{
    char *end;
    errno = 0;
    long reps = strtol(text, &end, 10);
    if (end == text || *end || errno || reps < 1 || reps > 1000000)
        die_user("--reps '%s': expected a whole number from 1 to 1000000", text);
    return (int)reps;
}

static int parse_pages(const char *text)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(text, PAGES_NAMES[i]) == 0)
            return i;
    die_user("--pages '%s': expected auto, huge or base", text);
}

static int parse_arguments(int argc, char **argv, run_options *options, thread_spec *specs)
{
    int count = 0;
    const char *size_text = NULL, *value;
    memset(options, 0, sizeof *options);
    options->reps = DEFAULT_REPS;
    options->sysfs_root = "/sys";
    options->argc = argc;
    options->argv = argv;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int background = 0;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            print_help();
            exit(0);
        } else if (strcmp(arg, "--allow-misplaced") == 0) {
            options->allow_misplaced = 1;
            continue;
        } else if (strcmp(arg, "--first-touch") == 0) {
            options->first_touch = 1;
            continue;
        } else if (strcmp(arg, "--resolve") == 0 || strcmp(arg, "--dry-run") == 0) {
            options->resolve_only = 1;
            continue;
        } else if ((value = option_value(argc, argv, &i, "--size"))) {
            size_text = value;
            continue;
        } else if ((value = option_value(argc, argv, &i, "--reps"))) {
            options->reps = parse_reps(value);
            continue;
        } else if ((value = option_value(argc, argv, &i, "--pages"))) {
            options->pages = parse_pages(value);
            continue;
        } else if ((value = option_value(argc, argv, &i, "--json"))) {
            options->json_path = value;
            continue;
        } else if ((value = option_value(argc, argv, &i, "--sysfs"))) {
            options->sysfs_root = value;
            continue;
        } else if ((value = option_value(argc, argv, &i, "--bg"))) {
            arg = value;
            background = 1;
        } else if (arg[0] == '-' && arg[1]) {
            die_user("unknown option '%s'; see --help", arg);
        }
        if (count == MAX_THREADS)
            die_user("more than %d threads", MAX_THREADS);
        parse_spec(arg, background, &specs[count++]);
    }
    if (size_text) {
        options->size_bytes = parse_size_bytes(size_text);
        options->size_given = 1;
    }
    for (int i = 0; i < count; i++)
        specs[i].huge = options->pages == PAGES_HUGE || (options->pages == PAGES_AUTO && specs[i].op == 'l');
    return count;
}

/* Whole pages; the default is 4 x the last-level cache, never less than 64 MiB, in whole 2 MiB. */
static void settle_size(run_options *options, const host_info *host)
{
    long long page = host->page_bytes;
    if (!options->size_given) {
        long long bytes = 4 * host->llc_bytes;
        if (bytes < MIN_DEFAULT_BYTES)
            bytes = MIN_DEFAULT_BYTES;
        options->size_bytes = (bytes + DEFAULT_SIZE_ALIGN - 1) / DEFAULT_SIZE_ALIGN * DEFAULT_SIZE_ALIGN;
    }
    options->size_bytes = (options->size_bytes + page - 1) / page * page;
}

int main(int argc, char **argv)
{
    static thread_spec specs[MAX_THREADS];
    run_options options;
    int count = parse_arguments(argc, argv, &options, specs);
    int foreground = 0;
    for (int i = 0; i < count; i++)
        foreground += !specs[i].background;
    if (foreground == 0)
        die_user("no foreground thread given; e.g. stride 0.0.r.0 (see --help)");
    check_report_path(options.json_path);
    if (same_file(options.sysfs_root, "/sys"))
        options.sysfs_root = "/sys";   /* this machine's own, however written: its checks apply */
    host_info host;
    discover_host(&host, options.sysfs_root);
    settle_size(&options, &host);
    /* A fake sysfs tree (--sysfs) names this kernel's CPUs when threads run on them, but its nodes need not be
       this kernel's: the memory nodes are checked against Mems_allowed only with the real /sys. */
    int real_sysfs = strcmp(options.sysfs_root, "/sys") == 0;
    resolve_specs(&host, specs, count, real_sysfs || !options.resolve_only, real_sysfs);
    check_free_memory(&host, specs, count, options.size_bytes);
    if (options.resolve_only) {
        report_resolution(&host, specs, count, &options);
        release_host(&host);
        return 0;
    }
    worker *workers = xcalloc((size_t)count, sizeof *workers);
    for (int i = 0; i < count; i++)
        init_worker(&workers[i], &specs[i], i, &host, &options);
    run_workers(workers, count, &options);
    warning_list warnings = {0};
    collect_warnings(workers, count, &host, &options, &warnings);
    report_run(&host, workers, count, &options, &warnings);
    for (int i = 0; i < warnings.count; i++) {
        fprintf(stderr, "stride: warning: %s\n", warnings.items[i]);
        free(warnings.items[i]);
    }
    free(warnings.items);
    for (int i = 0; i < count; i++)
        release_worker(&workers[i]);
    free(workers);
    release_host(&host);
    return 0;
}

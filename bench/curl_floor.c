/*
 * bench/curl_floor.c: what a request costs in libcurl alone, the reference
 * for the backend CPU of bench/thousand.sh.
 *
 * Usage: curl_floor URL KEY TABLES REQUESTS CONNECTIONS
 *   URL          the emulator, e.g. http://127.0.0.1:8080
 *   KEY          its API key
 *   TABLES       tables k1..kTABLES exist; requests go round-robin over them
 *   REQUESTS     get_lsm_stats POSTs to send in all
 *   CONNECTIONS  keep-alive connections, each with one request in flight
 *
 * The leanest client libcurl allows for lancelsm's traffic: one multi
 * handle driven by curl_multi_socket_action on one epoll set, at most
 * CONNECTIONS transfers in flight (each on its own keep-alive connection),
 * each easy handle reused from request to request with only its URL
 * changed, no signal handling (CURLOPT_NOSIGNAL, as a backend has), the
 * answer counted and dropped.  lancelsm does more per request (a request
 * id, its own headers and limits, decoding the answer, the driver, the
 * latch), so this is a floor, not a target.
 *
 * Prints one line: "requests N answered N cpu_ms MS per_request_us US",
 * the CPU being this process's user + system time (getrusage) over the
 * whole run.  Exits 1 when a request fails or is not answered 2xx.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/resource.h>

typedef struct Floor
{
	const char *url;
	int			tables;
	long		sent;
	long		requests;
	long		answered;
	int			epfd;
	long		timeout_ms;		/* libcurl's timer; -1: none */
} Floor;

/* libcurl's socket callback: keep the epoll set in step */
static int
floor_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	Floor	   *f = userp;
	struct epoll_event ev = {0};

	ev.data.fd = fd;
	if (what == CURL_POLL_REMOVE)
		return epoll_ctl(f->epfd, EPOLL_CTL_DEL, fd, NULL), 0;
	ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) |
		((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
	if (epoll_ctl(f->epfd, EPOLL_CTL_MOD, fd, &ev) != 0)
		epoll_ctl(f->epfd, EPOLL_CTL_ADD, fd, &ev);
	return 0;
}

/* libcurl's timer callback */
static int
floor_timer(CURLM *multi, long timeout_ms, void *userp)
{
	((Floor *) userp)->timeout_ms = timeout_ms;
	return 0;
}

/* drop the body: only the status counts */
static size_t
floor_discard(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	return size * nmemb;
}

/* point easy at the next table and put it on multi; false when all are sent */
static int
floor_send(Floor *f, CURLM *multi, CURL *easy)
{
	char		url[512];

	if (f->sent == f->requests)
		return 0;
	snprintf(url, sizeof(url), "%s/v1/table/k%ld/get_lsm_stats/", f->url,
			 f->sent % f->tables + 1);
	curl_easy_setopt(easy, CURLOPT_URL, url);
	f->sent++;
	curl_multi_add_handle(multi, easy);
	return 1;
}

/* a new easy handle with the options every request shares */
static CURL *
floor_easy(struct curl_slist *headers)
{
	CURL	   *easy = curl_easy_init();

	if (easy == NULL)
		exit(1);
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(easy, CURLOPT_POSTFIELDS, "{\"include_generation_rows\": false}");
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, floor_discard);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	return easy;
}

/* take every finished transfer off multi, count it, send the next on it */
static int
floor_collect(Floor *f, CURLM *multi)
{
	CURLMsg    *msg;
	int			left;

	while ((msg = curl_multi_info_read(multi, &left)) != NULL)
	{
		long		status = 0;
		CURL	   *easy = msg->easy_handle;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
		if (msg->data.result != CURLE_OK || status / 100 != 2)
		{
			fprintf(stderr, "curl_floor: request failed: %s, HTTP %ld\n",
					curl_easy_strerror(msg->data.result), status);
			return 0;
		}
		f->answered++;
		curl_multi_remove_handle(multi, easy);
		floor_send(f, multi, easy);
	}
	return 1;
}

int
main(int argc, char **argv)
{
	Floor		f = {0};
	int			conns;
	int			running;
	char		auth[512];
	struct curl_slist *headers = NULL;
	struct rusage ru;
	CURLM	   *multi;
	CURL	  **easies;
	double		cpu_ms;

	if (argc != 6)
	{
		fprintf(stderr, "usage: curl_floor URL KEY TABLES REQUESTS CONNECTIONS\n");
		return 2;
	}
	f.url = argv[1];
	f.tables = atoi(argv[3]);
	f.requests = atol(argv[4]);
	conns = atoi(argv[5]);
	curl_global_init(CURL_GLOBAL_ALL);
	snprintf(auth, sizeof(auth), "x-api-key: %s", argv[2]);
	headers = curl_slist_append(headers, auth);
	headers = curl_slist_append(headers, "content-type: application/json");
	f.epfd = epoll_create1(0);
	f.timeout_ms = -1;
	multi = curl_multi_init();
	curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long) conns);
	curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, floor_socket);
	curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, &f);
	curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, floor_timer);
	curl_multi_setopt(multi, CURLMOPT_TIMERDATA, &f);
	easies = calloc(conns, sizeof(CURL *));
	for (int i = 0; i < conns; i++)
	{
		easies[i] = floor_easy(headers);
		floor_send(&f, multi, easies[i]);
	}
	while (f.answered < f.requests)
	{
		struct epoll_event events[64];
		int			n = epoll_wait(f.epfd, events, 64,
								   f.timeout_ms < 0 ? 1000 : (int) f.timeout_ms);

		if (n == 0)
		{
			f.timeout_ms = -1;
			curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
		}
		for (int i = 0; i < n; i++)
			curl_multi_socket_action(multi, events[i].data.fd,
									 ((events[i].events & EPOLLIN) ? CURL_CSELECT_IN : 0) |
									 ((events[i].events & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
									 ((events[i].events & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0),
									 &running);
		if (!floor_collect(&f, multi))
			return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0;
	printf("requests %ld answered %ld cpu_ms %.0f per_request_us %.1f\n",
		   f.requests, f.answered, cpu_ms,
		   f.answered ? cpu_ms * 1000.0 / f.answered : 0.0);
	return f.answered == f.requests ? 0 : 1;
}

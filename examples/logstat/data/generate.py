"""Generate the access logs that logstat's workloads read.

The logs are synthetic but shaped like real ones: a daily traffic curve, a few
heavy clients and a long tail of light ones, Zipf-distributed product and user
ids, log-normal response times with a slow tail, crawlers, vulnerability
scanners and the odd broken line. Every file is a pure function of its seed,
so running this again rewrites the same bytes:

    python data/generate.py            # writes next to this script
    python data/generate.py --check    # exits 1 if a committed file differs

Standard library only.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

# Relative traffic per hour of the local day: quiet at night, busy evenings.
DAY_CURVE = [
    0.35, 0.25, 0.18, 0.14, 0.13, 0.16, 0.30, 0.55, 0.80, 0.95, 1.00, 1.00,
    1.05, 1.00, 0.95, 0.95, 1.00, 1.05, 1.15, 1.30, 1.40, 1.25, 0.90, 0.60,
]

BROWSERS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    + "Chrome/122.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    + "Version/17.3.1 Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_3_1 like Mac OS X) AppleWebKit/605.1.15 "
    + "(KHTML, like Gecko) Version/17.3.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) "
    + "Chrome/122.0.6261.105 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:123.0) Gecko/20100101 Firefox/123.0",
    "Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0",
]
CRAWLERS = [
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
]
SCANNER_UA = "Mozilla/5.0 zgrab/0.x"
SCANNER_PATHS = [
    "/wp-login.php", "/.env", "/.git/config", "/phpmyadmin/index.php", "/admin/config.php",
    "/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php", "/cgi-bin/luci/;stok=/locale",
]
SEARCH_TERMS = [
    "running+shoes", "rain+jacket", "backpack", "water+bottle", "headlamp", "wool+socks",
    "tent", "sleeping+bag", "trail+mix", "gaiters", "merino", "down+vest", "stove", "compass",
]


@dataclass
class Request:
    method: str
    target: str
    status: int
    size: int
    seconds: float
    referer: str = "-"
    agent: str = "-"


@dataclass
class Site:
    """What differs between the logs: the routes, the clients and the clock."""

    name: str
    seed: int
    day: datetime  # local midnight, with the server's UTC offset
    requests: int
    clients: int
    routes: Callable[[random.Random], Request]
    agents: list[str]
    client_skew: float = 0.9  # how much of the traffic the busiest clients send
    ipv6_share: float = 0.1
    log_request_time: bool = True


def zipf_index(rng: random.Random, n: int, s: float = 1.1) -> int:
    """An index in [0, n) where low indexes are far more common than high ones."""
    # Inverse-CDF of a continuous power law: cheap and good enough for ids.
    u = rng.random()
    x = ((n + 1) ** (1 - s) - 1) * u + 1
    return min(n - 1, int(x ** (1 / (1 - s))) - 1)


def latency(rng: random.Random, median: float, sigma: float = 0.6) -> float:
    """Log-normal response time with an occasional stall (GC, lock, cold cache)."""
    t = rng.lognormvariate(math.log(median), sigma)
    if rng.random() < 0.01:
        t += rng.uniform(0.5, 4.0)
    return round(t, 3)


def hex_id(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def ipv4(rng: random.Random) -> str:
    while True:
        a = rng.randint(1, 223)
        if a not in (10, 100, 127, 169, 172, 192):
            return f"{a}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


def ipv6(rng: random.Random) -> str:
    groups = [f"{rng.randint(0, 0xFFFF):x}" for _ in range(4)]
    return "2a02:" + ":".join(groups) + "::" + f"{rng.randint(1, 0xFFFF):x}"


def client_pool(rng: random.Random, n: int, v6_share: float) -> list[str]:
    return [ipv6(rng) if rng.random() < v6_share else ipv4(rng) for _ in range(n)]


# --- shop.example.com: an outdoor-gear shop -----------------------------------------------

SHOP = "https://shop.example.com"
CATEGORIES = ["tents", "backpacks", "footwear", "jackets", "sleeping-bags", "cooking", "lights"]
SHOP_ASSETS = [
    ("/static/js/app.3f9c2e1b.js", 248_113),
    ("/static/js/vendor.b81e4f02.js", 512_987),
    ("/static/css/site.7a1d55c0.css", 61_204),
    ("/static/fonts/inter-var.woff2", 98_560),
]


def shop_route(rng: random.Random) -> Request:
    r = rng.random()
    pid = 1000 + zipf_index(rng, 900)
    page = rng.choice(["/", f"/category/{rng.choice(CATEGORIES)}", f"/products/{pid}"])
    ref = rng.choice(["-", SHOP + page, SHOP + page, "https://www.google.com/"])
    if r < 0.20:
        return Request("GET", f"/products/{pid}", 200, rng.randint(18_000, 42_000),
                       latency(rng, 0.045), ref)
    if r < 0.27:
        n = rng.randint(1, 4)
        return Request("GET", f"/products/{pid}/reviews?page={n}", 200,
                       rng.randint(3_000, 12_000), latency(rng, 0.080), SHOP + f"/products/{pid}")
    if r < 0.35:
        cat = rng.choice(CATEGORIES)
        sort = rng.choice(["popular", "price", "new"])
        return Request("GET", f"/category/{cat}?sort={sort}&page={rng.randint(1, 6)}", 200,
                       rng.randint(30_000, 60_000), latency(rng, 0.110), ref)
    if r < 0.40:
        term = rng.choice(SEARCH_TERMS)
        return Request("GET", f"/search?q={term}", 200, rng.randint(20_000, 50_000),
                       latency(rng, 0.220, 0.8), ref)
    if r < 0.52:
        fresh = rng.random() < 0.4
        return Request("GET", f"/static/img/products/{pid}.jpg", 200 if fresh else 304,
                       rng.randint(40_000, 180_000) if fresh else 0, latency(rng, 0.004),
                       SHOP + f"/products/{pid}")
    if r < 0.62:
        asset, size = rng.choice(SHOP_ASSETS)
        fresh = rng.random() < 0.3
        return Request("GET", asset, 200 if fresh else 304, size if fresh else 0,
                       latency(rng, 0.003), SHOP + "/")
    if r < 0.70:
        return Request("GET", f"/api/stock/{pid}", 200, rng.randint(80, 140),
                       latency(rng, 0.012), SHOP + f"/products/{pid}")
    if r < 0.75:
        return Request("POST", "/api/events", 204, 0, latency(rng, 0.006), SHOP + "/")
    if r < 0.80:
        return Request("GET", "/", 200, rng.randint(52_000, 56_000), latency(rng, 0.060), ref)
    if r < 0.84:
        return Request("POST", "/cart/items", rng.choice([201, 201, 201, 409]), 310,
                       latency(rng, 0.090), SHOP + f"/products/{pid}")
    if r < 0.87:
        return Request("GET", "/cart", 200, rng.randint(14_000, 24_000), latency(rng, 0.070),
                       SHOP + f"/products/{pid}")
    if r < 0.885:
        status = rng.choice([303] * 12 + [402, 500, 502])
        return Request("POST", "/checkout", status, 0 if status == 303 else 1_024,
                       latency(rng, 0.650, 0.5), SHOP + "/cart")
    if r < 0.90:
        order = hex_id(rng, 24)
        return Request("GET", f"/checkout/confirm/{order}", 200, rng.randint(9_000, 11_000),
                       latency(rng, 0.150), SHOP + "/cart")
    if r < 0.92:
        order = hex_id(rng, 24)
        return Request("GET", f"/account/orders/{order}", rng.choice([200, 200, 200, 403]),
                       rng.randint(8_000, 16_000), latency(rng, 0.120), SHOP + "/account")
    if r < 0.95:
        path = rng.choice(["/robots.txt", "/favicon.ico", "/sitemap.xml", "/favicon.ico"])
        size = {"/robots.txt": 312, "/favicon.ico": 15_086, "/sitemap.xml": 184_220}[path]
        return Request("GET", path, 200, size, latency(rng, 0.002))
    if r < 0.97:
        return Request("GET", f"/products/{rng.randint(1, 99_999)}", 404, 4_512,
                       latency(rng, 0.020), ref)
    return Request(rng.choice(["GET", "GET", "POST"]), rng.choice(SCANNER_PATHS), 404, 4_512,
                   latency(rng, 0.010), "-", SCANNER_UA)


# --- api.example.com: the JSON backend of a mobile app ------------------------------------

APP_AGENTS = [
    "ExampleApp/5.12.1 (iPhone; iOS 17.3.1; Scale/3.00)",
    "ExampleApp/5.12.1 (iPhone; iOS 16.7.5; Scale/3.00)",
    "ExampleApp/5.12.0 (Android 14; Pixel 8)",
    "ExampleApp/5.11.4 (Android 13; SM-A536B)",
    "okhttp/4.12.0",
    "python-requests/2.31.0",
]


def api_route(rng: random.Random) -> Request:
    r = rng.random()
    uid = 1 + zipf_index(rng, 200_000, 1.05)
    post = hex_id(rng, 24)

    def status(ok: int, median: float) -> tuple[int, int, float]:
        s = rng.random()
        if s < 0.004:
            return 500, 98, latency(rng, median * 3)
        if s < 0.006:
            return 504, 176, round(rng.uniform(30.0, 30.2), 3)
        if s < 0.012:
            return 429, 64, latency(rng, 0.002)
        return ok, 0, latency(rng, median)

    if r < 0.28:
        code, size, t = status(200, 0.120)
        cursor = "" if rng.random() < 0.5 else f"?cursor={hex_id(rng, 12)}"
        return Request("GET", f"/v2/feed{cursor}", code, size or rng.randint(6_000, 28_000), t)
    if r < 0.43:
        code, size, t = status(200, 0.030)
        return Request("GET", f"/v2/users/{uid}", code, size or rng.randint(700, 2_400), t)
    if r < 0.49:
        code, size, t = status(200, 0.090)
        return Request("GET", f"/v2/users/{uid}/followers?limit=50", code,
                       size or rng.randint(3_000, 9_000), t)
    if r < 0.63:
        code, size, t = status(200, 0.040)
        return Request("GET", f"/v2/posts/{post}", code, size or rng.randint(1_200, 6_000), t)
    if r < 0.71:
        code, size, t = status(201, 0.055)
        return Request("POST", f"/v2/posts/{post}/likes", code, size or 41, t)
    if r < 0.75:
        code, size, t = status(201, 0.260)
        return Request("POST", "/v2/posts", code, size or rng.randint(400, 900), t)
    if r < 0.85:
        code, size, t = status(200, 0.035)
        if code == 200 and rng.random() < 0.5:
            code, size = 304, 0
        return Request("GET", "/v2/notifications", code,
                       size if code != 200 else rng.randint(300, 4_000), t)
    if r < 0.89:
        code, size, t = status(200, 0.180)
        if code == 200 and rng.random() < 0.08:
            code = 401
        return Request("POST", "/v2/auth/token", code, size or (rng.randint(900, 1_000)), t)
    if r < 0.94:
        code, size, t = status(200, 0.300)
        term = rng.choice(SEARCH_TERMS).replace("+", "%20")
        return Request("GET", f"/v2/search?q={term}&type=users", code,
                       size or rng.randint(2_000, 12_000), t)
    device = "-".join([hex_id(rng, 8), hex_id(rng, 4), "4" + hex_id(rng, 3), "a" + hex_id(rng, 3),
                       hex_id(rng, 12)])
    code, size, t = status(204, 0.025)
    return Request("PUT", f"/v2/devices/{device}", code, size, t)


def api_health_checks(day: datetime) -> list[tuple[datetime, str, Request]]:
    """The load balancer asks every two minutes, all day long."""
    checks = []
    for minute in range(0, 24 * 60, 2):
        when = day + timedelta(minutes=minute, seconds=7)
        checks.append((when, "10.0.3.17", Request("GET", "/healthz", 200, 2, 0.001,
                                                  agent="ELB-HealthChecker/2.0")))
    return checks


# --- docs.example.org: documentation and blog of an open-source tool ---------------------

DOC_PAGES = ["install", "quickstart", "configuration", "cli", "api", "faq", "changelog",
             "migrating-to-2", "plugins", "troubleshooting"]
BLOG_POSTS = ["2024/01/release-1-4", "2024/02/faster-builds", "2023/11/why-we-rewrote-the-parser",
              "2023/09/hello-world", "2024/03/release-2-0-beta"]
DOCS = "https://docs.example.org"


def docs_route(rng: random.Random) -> Request:
    r = rng.random()
    ref = rng.choice(["-", DOCS + "/", "https://www.google.com/", "https://github.com/",
                      "https://news.ycombinator.com/"])
    if r < 0.45:
        version = rng.choice(["2.0", "1.4", "1.4", "1.3"])
        page = DOC_PAGES[zipf_index(rng, len(DOC_PAGES), 1.3)]
        fresh = rng.random() < 0.8
        return Request("GET", f"/docs/{version}/{page}", 200 if fresh else 304,
                       rng.randint(14_000, 70_000) if fresh else 0, latency(rng, 0.015), ref)
    if r < 0.60:
        post = BLOG_POSTS[zipf_index(rng, len(BLOG_POSTS), 1.2)]
        return Request("GET", f"/blog/{post}", 200, rng.randint(25_000, 40_000),
                       latency(rng, 0.020), ref)
    if r < 0.68:
        term = rng.choice(["config", "proxy", "plugin", "install+windows", "error+42", "cache"])
        return Request("GET", f"/api/search?q={term}", 200, rng.randint(900, 7_000),
                       latency(rng, 0.140, 0.9), DOCS + "/docs/2.0/install")
    if r < 0.73:
        build = rng.choice(["linux-amd64.tar.gz", "darwin-arm64.tar.gz", "windows-amd64.zip"])
        version = rng.choice(["2.0.0-beta.3", "1.4.2", "1.4.2"])
        status = 200 if rng.random() < 0.85 else 206
        full = status == 200
        size = rng.randint(11_000_000, 14_000_000) if full else rng.randint(1, 9) * 1_048_576
        return Request("GET", f"/downloads/tool-{version}-{build}", status, size,
                       latency(rng, 2.5, 0.7), DOCS + "/docs/2.0/install")
    if r < 0.90:
        asset = rng.choice(["/assets/main.4c1f.css", "/assets/search.91ab.js", "/assets/logo.svg"])
        return Request("GET", asset, 304 if rng.random() < 0.6 else 200, 0, latency(rng, 0.002),
                       DOCS + "/")
    if r < 0.95:
        return Request("GET", "/feed.xml", 200 if rng.random() < 0.3 else 304, 0,
                       latency(rng, 0.010), "-", "Feedly/1.0 (+http://www.feedly.com/fetcher.html)")
    if r < 0.98:
        return Request("GET", f"/docs/1.2/{rng.choice(DOC_PAGES)}", 404, 8_230, latency(rng, 0.010),
                       ref)
    return Request("GET", rng.choice(SCANNER_PATHS), 404, 8_230, latency(rng, 0.008), "-",
                   SCANNER_UA)


# --- writing a log ------------------------------------------------------------------------


def timestamp(when: datetime) -> str:
    offset = when.strftime("%z")
    return f"{when.day:02d}/{MONTHS[when.month - 1]}/{when.year}:{when:%H:%M:%S} {offset}"


def arrival_times(rng: random.Random, day: datetime, n: int) -> list[datetime]:
    hours = rng.choices(range(24), weights=DAY_CURVE, k=n)
    times = [day + timedelta(hours=h, seconds=rng.randrange(3600)) for h in hours]
    times.sort()
    return times


def format_line(client: str, when: datetime, req: Request, with_time: bool) -> str:
    line = (f'{client} - - [{timestamp(when)}] "{req.method} {req.target} HTTP/1.1" '
            f'{req.status} {req.size} "{req.referer}" "{req.agent}"')
    return f"{line} {req.seconds:.3f}" if with_time else line


def build_log(site: Site) -> list[str]:
    rng = random.Random(site.seed)
    pool = client_pool(rng, site.clients, site.ipv6_share)
    agent_of = {c: rng.choice(site.agents) for c in pool}
    crawlers = [(ipv4(rng), ua) for ua in CRAWLERS for _ in range(3)]

    events: list[tuple[datetime, str, Request]] = []
    for when in arrival_times(rng, site.day, site.requests):
        if rng.random() < 0.04:
            client, agent = rng.choice(crawlers)
        else:
            client = pool[zipf_index(rng, len(pool), site.client_skew)]
            agent = agent_of[client]
        req = site.routes(rng)
        if req.agent == "-":
            req.agent = agent
        events.append((when, client, req))
    if site.routes is api_route:
        events.extend(api_health_checks(site.day))

    # A line is written when its response is done, but carries the time the request
    # arrived, so slow requests show up a little out of order (as Apache writes them).
    events.sort(key=lambda e: (e[0] + timedelta(seconds=e[2].seconds), e[0]))
    return [format_line(c, w, r, site.log_request_time) for w, c, r in events]


def broken_lines(rng: random.Random, day: datetime) -> list[tuple[int, str]]:
    """What a real log also holds: TLS on the plain port, timeouts, a torn first line."""
    lines = []
    for _ in range(6):
        when = day + timedelta(seconds=rng.randrange(86_400))
        hello = "\\x16\\x03\\x01\\x02\\x00\\x01\\x00\\x01\\xFC\\x03\\x03"
        lines.append((rng.randrange(10_000),
                      f'{ipv4(rng)} - - [{timestamp(when)}] "{hello}" 400 157 "-" "-" 0.001'))
    for _ in range(4):
        when = day + timedelta(seconds=rng.randrange(86_400))
        lines.append((rng.randrange(10_000),
                      f'{ipv4(rng)} - - [{timestamp(when)}] "-" 408 0 "-" "-" 60.001'))
    return lines


def rotated_log(site: Site) -> list[str]:
    """Yesterday's log as logrotate left it: cut mid-line at the top, with junk mixed in,
    and the request time only from 14:00 on, when it was added to the log format."""
    rng = random.Random(site.seed + 1)
    lines = build_log(site)
    cutover = timestamp(site.day + timedelta(hours=14))[:14]  # "10/Mar/2024:14"
    seen_cutover = False
    for i, line in enumerate(lines):
        seen_cutover = seen_cutover or cutover in line
        if not seen_cutover:
            lines[i] = line.rsplit(" ", 1)[0]
    for at, junk in broken_lines(rng, site.day):
        lines.insert(at % len(lines), junk)
    lines[0] = lines[0][len(lines[0]) // 2:]
    return lines


CET = timezone(timedelta(hours=1))
EST = timezone(timedelta(hours=-5))

SITES = {
    "shop-2024-03-11.log": (build_log, Site(
        "shop", 311, datetime(2024, 3, 11, tzinfo=UTC), 2_900, 1_400, shop_route,
        BROWSERS)),
    # Phones behind carrier NAT: most clients are seen only once or twice a day.
    "api-2024-03-12.log": (build_log, Site(
        "api", 312, datetime(2024, 3, 12, tzinfo=CET), 7_700, 20_000, api_route, APP_AGENTS,
        client_skew=0.3)),
    "shop-2024-03-10.log.1": (rotated_log, Site(
        "shop", 310, datetime(2024, 3, 10, tzinfo=UTC), 1_900, 900, shop_route, BROWSERS)),
    "holdout/docs-2024-03-13.log": (build_log, Site(
        "docs", 313, datetime(2024, 3, 13, tzinfo=EST), 2_200, 1_800, docs_route, BROWSERS,
        ipv6_share=0.2)),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    stale = []
    for name, (build, site) in SITES.items():
        text = "\n".join(build(site)) + "\n"
        path = HERE / name
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {path.relative_to(HERE)}: {text.count(chr(10))} lines, {len(text)} bytes")
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

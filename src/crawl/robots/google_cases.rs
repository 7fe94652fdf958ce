//! Test data: robots.txt files from Google's robotstxt test suite (robots_test.cc) and a few of
//! ours, with the answers `RobotsRules` and Google's matcher must both give.

/// robots.txt files from Google's robotstxt test suite (and a few of ours), each with the
/// paths it is checked on and the expected answer for FooBot (Google's, for the URL as our
/// normaliser writes it).
pub(super) const CASES: &[(&str, &[(&str, bool)])] = &[
    // Line syntax: a missing colon is accepted, garbage keys are not rules.
    ("user-agent: FooBot\ndisallow: /\n", &[("/x/y", false)]),
    ("foo: FooBot\nbar: /\n", &[("/x/y", true)]),
    ("user-agent FooBot\ndisallow /\n", &[("/x/y", false)]),
    // Groups: rules before any user-agent are ignored; groups for the token merge.
    (
        "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\nuser-agent: BarBot\n\
         disallow: /\nallow: /y/\n\n\nallow: /w/\nuser-agent: BazBot\n\nuser-agent: FooBot\n\
         allow: /z/\ndisallow: /\n",
        &[
            ("/x/b", true),
            ("/z/d", true),
            ("/y/c", false),
            ("/foo/bar/", false),
        ],
    ),
    // Other lines (Sitemap, unknown keys) end a group too.
    (
        "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n",
        &[("/", false)],
    ),
    (
        "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n",
        &[("/", true)],
    ),
    (
        "User-agent: FooBot\nCrawl-delay: 5\nUser-agent: BarBot\nDisallow: /\n",
        &[("/", true)],
    ),
    // Key names and the user-agent value are case-insensitive; the agent is read up to the
    // first character outside [a-zA-Z_-].
    (
        "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n",
        &[("/x/y", true), ("/a/b", false)],
    ),
    (
        "user-agent: FOOBOT BAR\nallow: /x/\ndisallow: /\n",
        &[("/x/y", true), ("/a/b", false)],
    ),
    ("User-agent: foobot/2.1\nDisallow: /\n", &[("/", false)]),
    ("User-agent: FooBotX\nDisallow: /\n", &[("/", true)]),
    // Specific groups win over `*`, even when the `*` group is more restrictive.
    (
        "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n",
        &[("/x/y", false)],
    ),
    (
        "user-agent: *\ndisallow: /x/\nuser-agent: FooBot\ndisallow: /y/\n",
        &[("/x/page", true), ("/y/page", false)],
    ),
    (
        "user-agent: BarBot\ndisallow: /\nuser-agent: BazBot\ndisallow: /\n",
        &[("/", true)],
    ),
    ("", &[("/", true)]),
    // `*` and the token in one group.
    (
        "User-agent: FooBot\n\nUser-agent: *\nDisallow: /\n",
        &[("/a", false)],
    ),
    // Values are case-sensitive.
    (
        "user-agent: FooBot\ndisallow: /x/\n",
        &[("/x/", false), ("/X/", true)],
    ),
    // Longest match; ties go to Allow; empty values match nothing.
    (
        "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n",
        &[("/x/page.html", true)],
    ),
    (
        "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n",
        &[("/page.html", false), ("/page", true)],
    ),
    (
        "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n",
        &[("/x/page.html", true), ("/x/y.html", false)],
    ),
    (
        "user-agent: FooBot\nallow: \ndisallow: \n",
        &[("/x/y", true)],
    ),
    ("user-agent: FooBot\ndisallow: \n", &[("/x/y", true)]),
    (
        "user-agent: FooBot\nallow: /\ndisallow: /\n",
        &[("/", true)],
    ),
    (
        "user-agent: FooBot\nallow: /$\ndisallow: /\n",
        &[("/", true), ("/index.html", false)],
    ),
    (
        "user-agent: FooBot\nallow: /folder\ndisallow: /folder/\n",
        &[("/folder", true), ("/folder/page", false)],
    ),
    // Wildcards: `*` anywhere, `$` only at the end.
    (
        "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n",
        &[
            ("/foo/bar/quz", false),
            ("/foo/quz", true),
            ("/foo//quz", true),
            ("/foo/bax/quz", true),
        ],
    ),
    (
        "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n",
        &[
            ("/foo/bar", false),
            ("/foo/bar/qux", true),
            ("/foo/bar/", true),
            ("/foo/bar/baz", true),
        ],
    ),
    (
        "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n",
        &[("/foo/bar", true), ("/foo/quz", false)],
    ),
    (
        "user-agent: FooBot\ndisallow: /\nallow: /*.php$\n",
        &[
            ("/filename.php", true),
            ("/filename.php?parameters", false),
            ("/filename.php5", false),
        ],
    ),
    (
        "user-agent: FooBot\ndisallow: /\nallow: /fish*.php\n",
        &[
            ("/fish.php", true),
            ("/fishheads/catfish.php?parameters", true),
            ("/Fish.PHP", false),
        ],
    ),
    (
        "user-agent: FooBot\ndisallow: /a$b\n",
        &[("/a$b", false), ("/a", true)],
    ),
    // Queries take part in matching.
    (
        "user-agent: FooBot\ndisallow: /\nallow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n",
        &[
            ("/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true),
            ("/foo/bar?qux=taz", false),
        ],
    ),
    (
        "user-agent: FooBot\ndisallow: /*?\n",
        &[("/a?b", false), ("/a", true)],
    ),
    // Non-ASCII patterns are %-encoded before matching; hex case does not matter.
    (
        "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n",
        &[
            ("/foo/bar/%E3%83%84", true),
            ("/foo/bar/ツ", true),
            ("/foo/bar/x", false),
        ],
    ),
    (
        "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%e3%83%84\n",
        &[("/foo/bar/%E3%83%84", true)],
    ),
    // Google: `Allow: …/index.htm(l)` also allows the directory itself.
    (
        "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n",
        &[
            ("/allowed-slash/", true),
            ("/allowed-slash/index.htm", false),
            ("/allowed-slash/index.html", true),
            ("/anyother-url", false),
        ],
    ),
    // Typos Google accepts; CR line ends.
    ("user-agent: FooBot\ndisalow: /x\n", &[("/x", false)]),
    (
        "User-Agent: FooBot\rDisallow: /x\rAllow: /x/y\r",
        &[("/x", false), ("/x/y", true)],
    ),
];

'use strict'

// The README and the pages under docs/ and benchmark/ against the code
// they describe: the API names the README lists are the package's exports
// and its declarations, docs/fallbacks.md lists exactly the FALLBACK
// reasons of lib/rules.js, every relative link (and its anchor) resolves
// in the repository, and every relative link of the README, which npm
// publishes with the package, resolves inside the tarball.

const childProcess = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const t = require('tap')

const ROOT = path.join(__dirname, '..')
const REPO_URL = 'https://github.com/http-oneshot/http-oneshot'

function read (file) {
  return fs.readFileSync(path.join(ROOT, file), 'utf8')
}

// The markdown files whose links are checked, relative to ROOT.
function pages () {
  const list = ['README.md', 'CHANGELOG.md']
  for (const dir of ['docs', 'benchmark']) {
    for (const name of fs.readdirSync(path.join(ROOT, dir)).sort()) {
      if (name.endsWith('.md')) list.push(`${dir}/${name}`)
    }
  }
  return list
}

// The text outside fenced code blocks, line by line (null for a line in
// one), so that code is never read as a link or a heading.
function proseLines (text) {
  let fenced = false
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced
      return null
    }
    return fenced ? null : line
  })
}

// GitHub's anchor for a heading: lower case, inline code and link markup
// dropped, anything but letters, digits, spaces, '-' and '_' removed,
// spaces as '-'; a repeated anchor gets -1, -2, ...
function anchors (text) {
  const seen = new Map()
  const out = new Set()
  for (const line of proseLines(text)) {
    const m = line === null ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (m === null) continue
    const base = m[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-')
    const n = seen.get(base) || 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

// Every [text](target) outside code: its target and line number.
function links (text) {
  const out = []
  proseLines(text).forEach((line, i) => {
    if (line === null) return
    const prose = line.replace(/`[^`]*`/g, '')
    for (const m of prose.matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      out.push({ target: m[1], line: i + 1 })
    }
  })
  return out
}

const isAbsolute = (target) => /^[a-z][a-z0-9+.-]*:/i.test(target)

// A link's file (relative to ROOT, '' for the page itself) and anchor, or
// null for an absolute link outside the repository.
function resolveLink (page, target) {
  let rel
  if (isAbsolute(target)) {
    const prefix = `${REPO_URL}/blob/main/`
    if (!target.startsWith(prefix)) return null
    rel = target.slice(prefix.length)
  } else {
    rel = target
  }
  const hash = rel.indexOf('#')
  const file = hash === -1 ? rel : rel.slice(0, hash)
  const anchor = hash === -1 ? null : decodeURIComponent(rel.slice(hash + 1))
  let resolved
  if (file === '') resolved = page
  else if (isAbsolute(target)) resolved = path.posix.normalize(file)
  else resolved = path.posix.normalize(path.posix.join(path.posix.dirname(page), file))
  return { file: resolved.replace(/\/$/, ''), anchor }
}

// The names the README's API table lists, from its first column.
function readmeApi () {
  const text = read('README.md')
  const start = text.indexOf('\n## API\n')
  if (start === -1) return null
  const end = text.indexOf('\n## ', start + 1)
  const names = []
  for (const line of text.slice(start, end === -1 ? undefined : end).split('\n')) {
    const m = /^\|\s*`([A-Za-z_$][\w$]*)/.exec(line)
    if (m !== null) names.push(m[1])
  }
  return names.sort()
}

// The value exports of index.d.ts.
function declared () {
  const names = []
  for (const m of read('index.d.ts').matchAll(/^export (?:declare )?(?:function|const|let|var) ([A-Za-z_$][\w$]*)/gm)) {
    names.push(m[1])
  }
  return [...new Set(names)].sort()
}

t.test('the README lists every export in its API table, and nothing else', async (t) => {
  const api = readmeApi()
  t.not(api, null, 'README.md has an "## API" section')
  const exported = Object.keys(require('../lib/index.js')).sort()
  t.strictSame(api, exported, 'the API table names the exports of lib/index.js')
  t.strictSame(api, declared(), 'and the exports index.d.ts declares')
})

t.test('the names the README\'s examples import exist', async (t) => {
  const exported = new Set(Object.keys(require('../lib/index.js')))
  const text = read('README.md')
  const imports = [
    ...text.matchAll(/const \{([^}]+)\} = require\('http-oneshot'\)/g),
    ...text.matchAll(/import \{([^}]+)\} from 'http-oneshot'/g)
  ]
  t.ok(imports.length > 0, 'the README imports from http-oneshot')
  for (const m of imports) {
    for (const name of m[1].split(',').map((s) => s.trim().split(/\s+as\s+/)[0]).filter(Boolean)) {
      t.ok(exported.has(name), `${name} is exported`)
    }
  }
  for (const m of text.matchAll(/require\('http-oneshot'\)\.([A-Za-z_$][\w$]*)/g)) {
    t.ok(exported.has(m[1]), `${m[1]} is exported`)
  }
})

t.test('docs/fallbacks.md lists exactly the FALLBACK reasons of lib/rules.js', async (t) => {
  const { FALLBACK } = require('../lib/rules.js')
  const rows = {}
  for (const line of read('docs/fallbacks.md').split('\n')) {
    const m = /^\|\s*`([a-z0-9-]+)`\s*\|\s*`([A-Z0-9_]+)`\s*\|/.exec(line)
    if (m === null) continue
    t.notOk(Object.hasOwn(rows, m[2]), `${m[2]} has one row`)
    rows[m[2]] = m[1]
  }
  t.strictSame(rows, { ...FALLBACK }, 'each reason with its FALLBACK key, both ways')
})

t.test('every relative link resolves in the repository, anchors included', async (t) => {
  for (const page of pages()) {
    const text = read(page)
    for (const { target, line } of links(text)) {
      const link = resolveLink(page, target)
      if (link === null) continue
      const where = `${page}:${line} ${target}`
      const full = path.join(ROOT, link.file)
      if (!fs.existsSync(full)) {
        t.fail(`${where}: ${link.file} does not exist`)
        continue
      }
      if (link.anchor === null) {
        t.pass(where)
      } else if (link.file.endsWith('.md')) {
        t.ok(anchors(fs.readFileSync(full, 'utf8')).has(link.anchor), `${where}: #${link.anchor} is a heading of ${link.file}`)
      } else {
        t.fail(`${where}: an anchor into a file that is not markdown`)
      }
    }
  }
})

// The files `npm pack` puts in the tarball, as it lists them; the prepack
// step (which builds the prebuilt addon) does not run for a listing.
function packedFiles () {
  const env = { ...process.env }
  for (const key of Object.keys(env)) {
    if (/^npm_(lifecycle|package|config_(global|prefix|offline|ignore_scripts|dry_run|json))/i.test(key)) delete env[key]
  }
  delete env.NODE_OPTIONS
  const res = childProcess.spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT, env, encoding: 'utf8', timeout: 60000
  })
  if (res.status !== 0) throw new Error(`npm pack --dry-run failed: ${res.stderr}`)
  return JSON.parse(res.stdout)[0].files.map((f) => f.path)
}

t.test('the README\'s relative links resolve inside the published tarball', async (t) => {
  const files = packedFiles()
  t.ok(files.includes('README.md'), 'the tarball carries the README')
  const inTarball = (file) => files.includes(file) || files.some((f) => f.startsWith(file + '/'))
  const relative = links(read('README.md')).filter(({ target }) => !isAbsolute(target))
  t.ok(relative.length > 0, 'the README has relative links')
  for (const { target, line } of relative) {
    const link = resolveLink('README.md', target)
    t.ok(inTarball(link.file), `README.md:${line} ${target}: ${link.file} is in the tarball`)
  }
})

t.test('the README is a page for users', async (t) => {
  const text = read('README.md')
  const lines = text.split('\n').length
  t.ok(lines <= 300, `at most 300 lines (${lines})`)
  const headings = text.split('\n').filter((l) => /^## /.test(l))
  t.strictSame(headings.slice(0, 3), ['## Install', '## Support', '## What you gain'],
    'install, support and gains come first')
  t.match(text, /^npm test$/m, 'it names the test command')
  t.notMatch(text, /\b1[12]-\d\d [a-z]\b/, 'no run labels')
  t.notMatch(text, /`[0-9a-f]{7,40}`/, 'no commit hashes')
  const pkg = JSON.parse(read('package.json'))
  t.match(read('CHANGELOG.md'), new RegExp(`^## \\[${pkg.version.replace(/\./g, '\\.')}\\] - \\d{4}-\\d\\d-\\d\\d$`, 'm'),
    `the CHANGELOG has a dated section for ${pkg.version}`)
})

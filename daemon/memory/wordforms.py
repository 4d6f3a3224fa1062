"""The forms a prompt's word may take in a memory, looked up at query time.

A memory says "deployment", "not Send", "nanoseconds" or 時刻; the prompt says "deploys",
"cannot be sent", `ns` or `time.Now`. The index keeps every memory's words as they are
(no stemmed copy to store or rebuild); a prompt's word is looked up in the forms that may
stand for it:

- English inflections and derivations: candidates made by changing the word's ending
  (deploy → deploys, deployed, deploying, deployment), kept only when the Snowball
  stemmer (PyStemmer) gives them the word's own stem, and only when a memory holds them;
- irregular verbs of everyday programming talk (sent → send, built → build, ran → run);
- abbreviations programmers write (ns, ms, env, config, repo, db, k8s, BQ …) and the
  words they stand for, both ways;
- a small glossary of core concepts in English, Chinese, Japanese and Korean (time, 時刻,
  时间, 시간; migration, マイグレーション, 迁移, 마이그레이션 …), so that a question asked in
  one language finds a memory written in another, with the words developers use for one
  symptom (stuck, hang, queued; crash, panic; firewall, security group), the everyday
  words a colleague hears as one (money, amount, currency, 金額; login, sign in; email,
  mail) and status codes (429, 504). A CJK word of the glossary stands as
  one unit of the prompt (its character bigrams are matched as a phrase, in order).

Pure functions and tables; the caller looks the forms up in the index.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from daemon.memory import tokenize
from daemon.memory.script_re import NonAscii

# Irregular past forms (and participles) to their verb.
IRREGULAR = dict(
    pair.split(">")
    for pair in (
        "sent>send built>build ran>run broke>break broken>break wrote>write written>write threw>throw "
        "thrown>throw found>find lost>lose kept>keep began>begin begun>begin chose>choose chosen>choose "
        "hid>hide hidden>hide took>take taken>take gave>give given>give got>get gotten>get went>go "
        "gone>go done>do did>do froze>freeze frozen>freeze hung>hang held>hold led>lead left>leave "
        "meant>mean paid>pay read>read rebuilt>rebuild rewrote>rewrite rewritten>rewrite shown>show "
        "spent>spend split>split stole>steal swept>sweep told>tell understood>understand "
        "undid>undo wound>wind woke>wake bound>bind fed>feed fell>fall fallen>fall shut>shut overran>overrun"
    ).split()
)

# One concept a line: its words in English (first: what the others are read as), then
# abbreviations and the words of the other languages. CJK words of one character are left
# out: inside a memory's text they are half of a bigram, not a word. `a+b` is a phrase of
# two words (security+group: "security group" in a memory, "security group" or
# securitygroup in a prompt); a number is a status code (429). A word on several lines
# stands for all of them (queued: a queue, and a task that is stuck).
CONCEPTS = """
time 時刻 时间 時間 시간 시각
timestamp タイムスタンプ 时间戳 타임스탬프 ts
timezone tz time+zone タイムゾーン 时区 시간대
nanosecond ns ナノ秒 纳秒 나노초
microsecond µs マイクロ秒 微秒 마이크로초
millisecond ms ミリ秒 毫秒 밀리초
thread スレッド 线程 스레드
ci cicd
test テスト 测试 테스트
build ビルド 构建 빌드
deploy deployment デプロイ 部署 배포
release リリース 发布 릴리스 릴리즈
migration migrate マイグレーション 迁移 마이그레이션
database db データベース 数据库 데이터베이스
log logging ログ 日志 로그
cache caching キャッシュ 缓存 캐시
certificate cert 証明書 证书 인증서
lock ロック 锁定 加锁 状态锁 上锁 잠금
lockfile ロックファイル 锁文件
state tfstate 状態 状态 상태
configuration config cfg conf 設定 配置 설정
environment env 環境 环境 환경
repository repo リポジトリ 仓库 저장소
permission forbidden 401 403 権限 权限 권한
notification 通知 알림
timeout timed+out time+out 504 タイムアウト 超时 타임아웃
leak リーク 泄漏 泄露 누수
disk ディスク 磁盘 디스크
node ノード 节点 노드
container コンテナ 容器 컨테이너
probe healthcheck health+check liveness readiness healthz プローブ ヘルスチェック 探针 健康检查 就绪 프로브 헬스체크
service サービス 服务 서비스
client クライアント 客户端 클라이언트
request req リクエスト 请求 요청
response resp レスポンス 响应 응답
query クエリ 查询 쿼리
handler ハンドラ ハンドラー 핸들러
schema スキーマ 스키마
rounding 丸め 舍入 반올림
float 浮動小数点 浮点 부동소수점
money amount currency monetary お金 金額 金额 金钱 货币 通貨 돈 금액 통화
screen 画面 屏幕 화면
domain ドメイン 域名 도메인
dns 名前解決 域名解析
parse parsing deserialize deserialization unmarshal パース デシリアライズ 解析 反序列化 파싱 역직렬화
class クラス 클래스
model モデル 模型 모델
queue queued キュー 队列 큐
connection connect 接続 连接 연결
upgrade bump アップグレード 升级 업그레이드
version バージョン 版本 버전
secret シークレット 密钥 시크릿
signature 署名 签名 서명
webhook callback ウェブフック コールバック 回调 웹훅 콜백
payment 決済 支付 결제
invoice 請求書 发票 청구서 인보이스
price 価格 价格 가격
product 商品 产品 상품 제품
restart crashloop crashloopbackoff 再起動 重启 재시작
startup 起動 启动 기동
scheduler スケジューラ スケジューラー 调度器 스케줄러
commit コミット 提交 커밋
editor エディタ エディター 编辑器 에디터
format フォーマット 形式 格式 형식 포맷
annotation アノテーション 注解 어노테이션
eviction evict 驱逐 퇴출
expiry expire expiration ttl 有効期限 过期 만료
renewal renew 续期 갱신
counter カウンタ カウンター 计数器 카운터
coroutine コルーチン 协程 코루틴
package pkg パッケージ 패키지
dependency deps 依存関係 依赖 의존성
job task タスク ジョブ 任务 作业 작업
merge マージ 合并 병합
kubernetes k8s 쿠버네티스
bigquery bq
postgres postgresql pg
javascript js
typescript
authentication auth 認証 认证 인증
authorization authz 認可 授权 인가
directory dir ディレクトリ 目录 디렉터리
production prod 本番 生产环境 프로덕션
development dev 開発 开发 개발
message msg メッセージ 消息 메시지
argument args 引数 参数 인수
parameter param params パラメータ 매개변수
variable var 変数 变量 변수
function func fn 関数 函数 함수
library lib ライブラリ 库 라이브러리
application app アプリ 应用 애플리케이션 앱
documentation docs ドキュメント 文档 문서
specification spec 仕様 规范 명세
performance perf 性能 パフォーマンス 성능
password パスワード 密码 비밀번호
key キー 키
retry リトライ 重试 재시도
memory メモリ 内存 메모리
stuck hang frozen freeze queued 卡住 卡死 フリーズ 멈춤 먹통
crash crashloop crashloopbackoff panic segfault クラッシュ 崩溃 闪退 크래시
slow latency sluggish 缓慢 遅延 지연
ratelimit rate+limit ratelimiter rate+limiter throttle throttling throttled 429 レート制限 レートリミット 限流 限速 속도제한
firewall sg security+group securitygroup ファイアウォール セキュリティグループ 防火墙 安全组 방화벽 보안그룹
rollout rolling+update ローリングアップデート 滚动发布 滚动更新 롤링업데이트
java jvm ジャバ 자바
terraform iac opentofu テラフォーム 테라폼
android アンドロイド 安卓 안드로이드
pod ポッド 파드
corrupt corrupted corruption 破損 损坏 写坏 손상
disconnect disconnected 切断 断开 연결끊김
proguard r8 minify minifyenabled obfuscation 難読化 混淆 난독화
customer 顧客 客户 고객
order 注文 订单 주문
dedupe deduplicate deduplication 重複排除 去重 중복제거
minute 分钟
backend バックエンド 后端 백엔드
frontend フロントエンド 前端 프론트엔드
sales 売上 销售 销量 매출
load ロード 加载 로드
quality 品質 质量 품질
output 出力 输出 출력
input 入力 输入 입력
reset リセット 重置 리셋
image 画像 图片 이미지
resize リサイズ 缩放 리사이즈
rotate rotation ローテーション 轮转 로테이션
scope スコープ 作用域 스코프
typo タイポ 拼写错误 오타
runner ランナー 러너
share sharing 共有 共享 공유
remote リモート 远程 원격
interval インターバル 间隔 간격
timer タイマー 定时器 타이머
socket ソケット 套接字 소켓
agent エージェント 代理 에이전트
limit 制限 限制 제한
pool プール 连接池
drift ドリフト 漂移 드리프트
console コンソール 控制台 콘솔
hostname ホスト名 主机名 호스트명
tax vat 税金 消費税 税费 增值税 세금 부가세
discount 割引 折扣 할인
login signin sign+in ログイン 登录 로그인
logout signout sign+out ログアウト 登出 로그아웃
email mail メール 邮件 电子邮件 이메일
upload アップロード 上传 업로드
download ダウンロード 下载 다운로드
backup バックアップ 备份 백업
encryption encrypt encrypted 暗号化 加密 암호화
search 検索 搜索 검색
filter フィルタ フィルター 过滤 筛选 필터
sort ソート 排序 정렬
pagination paginate paging ページネーション 分页 페이지네이션
transaction トランザクション 事务 트랜잭션
browser ブラウザ ブラウザー 浏览器 브라우저
port ポート 端口 포트
proxy プロキシ 代理服务器 프록시
regex regexp 正規表現 正则表达式 정규식
process プロセス 进程 프로세스
deadlock デッドロック 死锁 교착상태
string 文字列 字符串 문자열
integer int 整数 정수
boolean bool 真偽値 布尔 불리언
"""

_LATIN = re.compile(r"[a-zµ]+")
STARTS = "^"  # a form marked so is found only where a word starts (모델, not 뷰모델's)
_SPACED = NonAscii("[\uac00-\ud7af\u30a0-\u30ff]")  # Hangul, katakana: words have edges


def parts(form: str) -> list[str]:
    """The tokens of a form (a phrase: its bigrams)."""
    return form.lstrip(STARTS).split()
# Endings tried on a word's stem; a candidate counts only when it has the word's stem.
# Inflections, and -ment (deploy, deployment); not -ion or -er, whose stems join other
# words (production and product, builder and build).
_ENDINGS = ("", "s", "es", "e", "ed", "ing", "ment", "ments")


@lru_cache(maxsize=1)
def _stemmer():
    try:
        import Stemmer  # PyStemmer: the Snowball stemmers in C
    except ImportError as error:  # a dependency since the word forms: an old install
        raise RuntimeError("PyStemmer is missing: reinstall memoryd (pip install -e . or pipx reinstall)") from error
    return Stemmer.Stemmer("english")


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """The word's Snowball (English) stem."""
    return _stemmer().stemWord(word)


def canonical(token: str) -> str:
    """The word a token stands for when it is an irregular verb form (sent → send)."""
    return IRREGULAR.get(token, token)


@lru_cache(maxsize=8192)
def candidate_forms(word: str) -> tuple[str, ...]:
    """The word and the strings that may be forms of it (deploy → deploys, deployment …),
    unverified: `is_form` tells which are, for the few a memory holds. Its plain plural
    or singular always (PDFs: the stemmer keeps pdfs); the others only when the word is
    itself its stem with an ending (production is product + ion: no form of product)."""
    plain = plain_forms(word)
    if not (word.isascii() and word.isalpha() and len(word) >= 3):
        return plain
    root = stem(word)
    # cach: cache, caches; a root ending in a vowel or y takes no e (deploy: no deploye)
    made = dict.fromkeys(root + ending for ending in _ENDINGS if root[-1] not in "aeiouyw" or ending[:1] != "e" or ending == "ed")
    if root.endswith("e"):  # time: timed, timing
        made.update(dict.fromkeys((root + "d", root[:-1] + "ing")))
    if root.endswith("i"):  # verifi: verify, verifies, verified
        made.update(dict.fromkeys((root[:-1] + "y", root + "es", root + "ed")))
    if len(root) <= 4 and root[-1] not in "aeiouwxy":  # run: running, pod: podded
        made.update(dict.fromkeys((root + root[-1] + "ing", root + root[-1] + "ed")))
    return tuple(dict.fromkeys((*plain, *made))) if word in made else plain


def is_form(word: str, form: str) -> bool:
    """True when `form` (one of `candidate_forms(word)`) is a form of the word."""
    return form in plain_forms(word) or stem(form) == stem(word)


def forms_of(word: str, candidates: list[str]) -> list[str]:
    """Those of `candidates` (of `candidate_forms(word)`) that are forms of the word,
    stemmed in one call."""
    if not candidates:
        return []
    plain, root = plain_forms(word), stem(word)
    return [f for f, its in zip(candidates, _stemmer().stemWords(candidates)) if f in plain or its == root]


@lru_cache(maxsize=4096)
def inflections(word: str) -> tuple[str, ...]:
    """The forms of the word that are forms of it (`candidate_forms`, verified)."""
    return tuple(forms_of(word, list(candidate_forms(word))))


def plain_forms(word: str) -> tuple[str, ...]:
    """The word, its singular and its plural (the plain -s only)."""
    single = word[:-1] if word.endswith("s") and not word.endswith("ss") else word
    return tuple(dict.fromkeys((word, single, single + "s")))


@dataclass(frozen=True)
class Concept:
    """One line of CONCEPTS: its English word first, then the others; and every word of it
    as it is looked up (`alternatives`)."""

    words: tuple[str, ...]
    forms: tuple[str, ...]

    def alternatives(self) -> tuple[str, ...]:
        """Every word of the concept as it is looked up: token streams, space-joined
        (a CJK word is the phrase of its bigrams), English words with their inflections."""
        return self.forms


def _alternatives(words: tuple[str, ...]) -> list[str]:
    """A concept's words as they are looked up (see `Concept.alternatives`)."""
    out: dict[str, None] = {}
    for word in words:
        if "+" in word:  # a phrase: its words in a row, and written as one
            out[" ".join(t for w in word.split("+") for t in tokenize.tokens(w))] = None
            out[word.replace("+", "")] = None
            continue
        found = tokenize.tokens(word)
        if len(found) == 1 and found[0].isascii():
            out.update(dict.fromkeys(inflections(found[0])))
        elif found:
            out[(STARTS if _SPACED.match(word) else "") + " ".join(found)] = None
    return list(out)


@lru_cache(maxsize=1)
def _concepts() -> tuple[dict[str, Concept], dict[str, Concept], dict[str, Concept]]:
    """(English word or abbreviation or number → concept, its stem → concept, CJK word →
    concept); a word on several lines stands for the union of their words. Built once
    (and kept in the state folder for the next command: `wordtables`)."""
    from daemon.memory import wordtables

    sources = (__file__, tokenize.__file__, wordtables.module_of("Stemmer"))
    concepts, *tables = wordtables.table("concepts", sources, _build_concepts, _concept_tables)
    made = [Concept(tuple(words), tuple(forms)) for words, forms in concepts]
    latin, stems, cjk = ({key: made[number] for key, number in table.items()} for table in tables)
    return latin, stems, cjk


def _concept_tables(value: object) -> bool:
    from daemon.memory.wordtables import strings

    if not (isinstance(value, list) and len(value) == 4 and isinstance(value[0], list)):
        return False
    concepts = value[0]
    return all(isinstance(c, list) and len(c) == 2 and strings(c[0]) and strings(c[1]) for c in concepts) and all(
        isinstance(table, dict) and all(isinstance(n, int) and 0 <= n < len(concepts) for n in table.values())
        for table in value[1:]
    )


def _build_concepts() -> list:
    """[each concept's words and alternatives, then the three tables as key → number of its concept]."""
    lines = [tuple(unicodedata.normalize("NFKC", w).casefold() for w in line.split()) for line in CONCEPTS.strip().splitlines()]
    latin: dict[str, dict[str, None]] = {}
    stems: dict[str, dict[str, None]] = {}
    cjk: dict[str, dict[str, None]] = {}
    for words in lines:
        for word in words:
            key = word.replace("+", "")
            if _LATIN.fullmatch(key) or key.isdigit():
                latin.setdefault(key, {}).update(dict.fromkeys(words))
                stems.setdefault(stem(key), {}).update(dict.fromkeys(words))
            elif 2 <= len(word) <= _LONGEST:
                cjk.setdefault(word, {}).update(dict.fromkeys(words))
    numbers: dict[tuple[str, ...], int] = {}  # one concept per distinct set of words
    tables = [{k: numbers.setdefault(tuple(v), len(numbers)) for k, v in table.items()} for table in (latin, stems, cjk)]
    return [[[list(words), _alternatives(words)] for words in numbers], *tables]


@lru_cache(maxsize=16384)
def concept_of(term: str) -> Concept | None:
    """The glossary concept an English word, abbreviation or status code stands for, if any."""
    latin, stems, _ = _concepts()
    return latin.get(term) or (stems.get(stem(term)) if term.isascii() and term.isalpha() and len(term) >= 4 else None)


_ANY_CJK = NonAscii("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_ANY_CJK_RUN = NonAscii("[\u3005-\u3007\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
_LONGEST = 10  # characters of the longest CJK word the glossary looks for


def cjk_concepts(text: str) -> list[tuple[str, Concept]]:
    """The glossary's CJK words in `text` (its phrase of bigrams, the concept), each
    run read left to right, the longest word at each place first (マイグレーション, not
    マイ…), a word found once."""
    if not _ANY_CJK.search(text):
        return []
    cjk = _concepts()[2]
    found: dict[str, Concept] = {}
    for run in _ANY_CJK_RUN.findall(unicodedata.normalize("NFKC", text)):
        start = 0
        while start < len(run) - 1:
            for end in range(min(len(run), start + _LONGEST), start + 1, -1):
                concept = cjk.get(run[start:end])
                if concept is not None:
                    found.setdefault(" ".join(tokenize.tokens(run[start:end])), concept)
                    start = end - 1
                    break
            start += 1
    return list(found.items())

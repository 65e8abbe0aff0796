//! The model's SQL, parsed — not pattern-matched — in the database's dialect, and refused unless it
//! is exactly one read-only query (feature `sql-guard`; docs/SECURITY.md, "The model's SQL").
//!
//! [`read_only_query`] parses the text with [sqlparser](https://docs.rs/sqlparser) in the
//! [`SqlDialect`] of the database (PostgreSQL's nested comments, MySQL's and SQLite's quoting
//! included) and accepts one statement that only reads: `SELECT`, `WITH … SELECT`, `VALUES`,
//! `TABLE`, parenthesized queries and set operations (`UNION`, `INTERSECT`, `EXCEPT`) of them, with
//! subqueries anywhere. Anything else is refused with a [`SqlRefused`] that has a stable
//! [`RefusalCode`], names the part refused and says what to send instead: text the parser cannot
//! read, no statement or several, a statement that is not a query, a data-modifying statement
//! inside one (a `WITH d AS (DELETE …)`), a locking clause (`FOR UPDATE`, `FOR SHARE`; MySQL's `LOCK IN SHARE
//! MODE` is not read at all), `SELECT … INTO`, and a call of a function that reaches outside the query's data —
//! the server's files, its settings, other sessions, replication, large objects, foreign servers,
//! locks that outlive the query, SQL run from text (docs/SECURITY.md lists them per dialect). An
//! operator adds to that list with a [`FunctionPolicy`] ([`read_only_query_with`]): more functions
//! to refuse, the database's own functions (refused as of unknown effect unless allowed), or an
//! allow list.
//!
//! What the database runs is the **parsed statement written back** (sqlparser's `Display`), not the
//! model's text: comments are gone, so nothing the parser did not see — a comment MySQL would execute
//! (`/*! … */`), text a different comment rule would reveal — reaches the database. The executors keep
//! the database's own read-only transaction (SQLite: `query_only` and a read-only statement) as a
//! second layer.
//!
//! ```
//! use dual_sql::sql_guard::{RefusalCode, SqlDialect, read_only_query};
//!
//! let sql = read_only_query("(SELECT 1 AS a) UNION (SELECT 2) -- two rows", SqlDialect::PostgreSql)
//!     .expect("a query");
//! assert_eq!(sql, "(SELECT 1 AS a) UNION (SELECT 2)");
//!
//! // PostgreSQL nests comments: this is a DELETE, and is refused as one.
//! let refused = read_only_query("/* /* */ SELECT */ DELETE FROM t", SqlDialect::PostgreSql).unwrap_err();
//! assert_eq!(refused.code(), RefusalCode::NotAQuery);
//! assert!(refused.to_string().contains("DELETE"));
//! ```

use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, ObjectName, ObjectNamePart, Query, SetExpr, Statement, TableFactor, Visit, Visitor,
};
use sqlparser::dialect::{Dialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

/// Deepest nesting of expressions and subqueries the parser follows before it refuses the SQL.
const RECURSION_LIMIT: usize = 128;

/// Deepest nesting of parentheses, brackets and `CASE` the SQL may have, and the longest run of
/// prefix operators, counted on its tokens before it is parsed.
pub const MAX_NESTING: usize = 48;

/// Most operators joining operands at one level (`a OR b OR …`): each makes the parsed tree one
/// level deeper.
pub const MAX_CHAIN: usize = 2_000;

/// Most set operations (`UNION`, `INTERSECT`, `EXCEPT`) in the whole statement.
pub const MAX_SET_OPERATIONS: usize = 250;

/// The stack of the thread the SQL is parsed on (reserved, not committed, until used): the parser,
/// the checks and the writing back recurse once per level of the statement.
const PARSE_STACK: usize = 256 << 20;

/// What to send instead, said by every refusal.
const SEND_INSTEAD: &str = "send exactly one query that only reads: SELECT, WITH … SELECT, VALUES or TABLE";

/// The SQL dialect of a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SqlDialect {
    /// PostgreSQL.
    PostgreSql,
    /// MySQL and MariaDB.
    MySql,
    /// SQLite.
    Sqlite,
}

impl SqlDialect {
    /// `PostgreSQL`, `MySQL`, `SQLite`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PostgreSql => "PostgreSQL",
            Self::MySql => "MySQL",
            Self::Sqlite => "SQLite",
        }
    }

    fn parser_dialect(self) -> &'static dyn Dialect {
        match self {
            Self::PostgreSql => &PostgreSqlDialect {},
            Self::MySql => &MySqlDialect {},
            Self::Sqlite => &SQLiteDialect {},
        }
    }
}

/// Why the model's SQL was refused: a stable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusalCode {
    /// The parser could not read the text (`sql_unparsable`).
    Unparsable,
    /// No statement at all (`sql_empty`).
    Empty,
    /// More than one statement (`sql_several_statements`).
    SeveralStatements,
    /// A statement that is not a query: `DELETE`, `CREATE`, `SET`, `COPY`, … (`sql_not_a_query`).
    NotAQuery,
    /// A statement that writes, inside a query: a data-modifying `WITH` (`sql_data_modifying`).
    DataModifying,
    /// A locking clause: `FOR UPDATE`, `FOR SHARE`, … (`sql_locking_clause`).
    LockingClause,
    /// `SELECT … INTO` (`sql_select_into`).
    SelectInto,
    /// A function that reaches outside the query's data: the server's files, its settings, other
    /// sessions, replication, large objects, locks that outlive the query, SQL run from text
    /// (`sql_function_refused`; docs/SECURITY.md lists them).
    FunctionRefused,
}

impl RefusalCode {
    /// `sql_unparsable`, `sql_empty`, ….
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Unparsable => "sql_unparsable",
            Self::Empty => "sql_empty",
            Self::SeveralStatements => "sql_several_statements",
            Self::NotAQuery => "sql_not_a_query",
            Self::DataModifying => "sql_data_modifying",
            Self::LockingClause => "sql_locking_clause",
            Self::SelectInto => "sql_select_into",
            Self::FunctionRefused => "sql_function_refused",
        }
    }
}

impl std::fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The model's SQL was refused before it reached the database. `Display` is the message for the
/// model: what was refused, and what to send instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} ({code})")]
pub struct SqlRefused {
    code: RefusalCode,
    message: String,
}

impl SqlRefused {
    fn new(code: RefusalCode, message: String) -> Self {
        Self { code, message }
    }

    /// The stable code.
    #[must_use]
    pub fn code(&self) -> RefusalCode {
        self.code
    }
}

/// Parses `sql` in `dialect` and returns the one read-only query it holds, written back as the SQL
/// the database should run (comments and a trailing `;` gone), with the built-in function list only.
///
/// # Errors
/// [`SqlRefused`] when `sql` is not exactly one read-only query (see the module docs).
pub fn read_only_query(sql: &str, dialect: SqlDialect) -> Result<String, SqlRefused> {
    read_only_query_with(sql, dialect, &FunctionPolicy::new())
}

/// [`read_only_query`] under the operator's [`FunctionPolicy`]: the built-in list, and what the
/// policy adds (more refused functions, user-defined functions, an allow list).
///
/// # Errors
/// [`SqlRefused`] when `sql` is not exactly one read-only query, or calls a function `policy`
/// refuses.
pub fn read_only_query_with(
    sql: &str,
    dialect: SqlDialect,
    policy: &FunctionPolicy,
) -> Result<String, SqlRefused> {
    within_nesting(sql, dialect)?;
    // On a thread of its own with a stack sized for the deepest statement the limits let through,
    // whatever thread the caller is on (a runtime's worker has 2 MiB).
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("sql-guard".to_owned())
            .stack_size(PARSE_STACK)
            .spawn_scoped(scope, || checked(sql, dialect, policy))
            .map_or_else(
                |_| checked(sql, dialect, policy),
                |parsing| {
                    parsing.join().unwrap_or_else(|_| {
                        Err(SqlRefused::new(
                            RefusalCode::Unparsable,
                            format!("the SQL could not be read; {SEND_INSTEAD}"),
                        ))
                    })
                },
            )
    })
}

fn checked(sql: &str, dialect: SqlDialect, policy: &FunctionPolicy) -> Result<String, SqlRefused> {
    match table_command(sql, dialect) {
        Some(select) => parsed_query(&select, dialect, policy),
        None => parsed_query(sql, dialect, policy),
    }
}

/// Refuses SQL nested deeper than [`MAX_NESTING`] (parentheses, brackets, `CASE … END`) or with a run
/// of more than [`MAX_NESTING`] prefix operators (`NOT NOT …`, `- - …`), counted on its tokens
/// before it is parsed: the parser recurses into each level, and a deep enough text would overflow a
/// thread's stack (and abort the process) before its own recursion limit applies to every shape.
fn within_nesting(sql: &str, dialect: SqlDialect) -> Result<(), SqlRefused> {
    let too_deep = || {
        SqlRefused::new(
            RefusalCode::Unparsable,
            format!(
                "the SQL nests deeper than {MAX_NESTING} levels (parentheses, CASE, operators in a row), \
                 joins more than {MAX_CHAIN} operands at one level or has more than \
                 {MAX_SET_OPERATIONS} set operations; write it flatter (WITH, IN lists); {SEND_INSTEAD}"
            ),
        )
    };
    // Text the tokenizer cannot read is refused by the parser, with its message.
    let Ok(tokens) = Tokenizer::new(dialect.parser_dialect(), sql).tokenize() else {
        return Ok(());
    };
    // Operators per open level: `a OR b OR …` and `… UNION …` make a tree as deep as their count.
    let mut chains: Vec<usize> = vec![0];
    let (mut prefixes, mut set_operations) = (0usize, 0usize);
    for token in tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))) {
        let keyword = match token {
            Token::Word(word) => Some(word.keyword),
            _ => None,
        };
        if matches!(
            keyword,
            Some(Keyword::UNION | Keyword::INTERSECT | Keyword::EXCEPT)
        ) {
            set_operations += 1;
        }
        match token {
            Token::LParen | Token::LBracket => chains.push(0),
            Token::RParen | Token::RBracket if chains.len() > 1 => {
                chains.pop();
            }
            _ if keyword == Some(Keyword::CASE) => chains.push(0),
            _ if keyword == Some(Keyword::END) && chains.len() > 1 => {
                chains.pop();
            }
            _ if is_operator(token) => {
                if let Some(chain) = chains.last_mut() {
                    *chain += 1;
                }
            }
            _ => {}
        }
        let prefix = matches!(
            token,
            Token::Minus | Token::Plus | Token::Tilde | Token::ExclamationMark
        ) || keyword == Some(Keyword::NOT);
        prefixes = if prefix { prefixes + 1 } else { 0 };
        let chain = chains.last().copied().unwrap_or_default();
        if chains.len() > MAX_NESTING + 1
            || prefixes > MAX_NESTING
            || chain > MAX_CHAIN
            || set_operations > MAX_SET_OPERATIONS
        {
            return Err(too_deep());
        }
    }
    Ok(())
}

/// Whether `token` joins two operands (`AND`, `OR`, the set operations, a symbol such as `+`,
/// `||`, `=`, `::`); not a name, a literal, a parameter or punctuation.
fn is_operator(token: &Token) -> bool {
    match token {
        Token::Word(word) => matches!(
            word.keyword,
            Keyword::AND | Keyword::OR | Keyword::UNION | Keyword::INTERSECT | Keyword::EXCEPT
        ),
        Token::Placeholder(_)
        | Token::Comma
        | Token::Period
        | Token::SemiColon
        | Token::LParen
        | Token::RParen
        | Token::LBracket
        | Token::RBracket => false,
        // Literals write themselves with a quote, a digit, a letter prefix (`E'…'`, `X'…'`) or `$`.
        other => other
            .to_string()
            .chars()
            .next()
            .is_some_and(|c| !(c.is_alphanumeric() || matches!(c, '\'' | '"' | '`' | '$' | '_'))),
    }
}

/// `TABLE name` (PostgreSQL's and MySQL's short form, which the parser does not read as a statement)
/// as the `SELECT * FROM name` it stands for; `None` for anything else.
fn table_command(sql: &str, dialect: SqlDialect) -> Option<String> {
    let tokens = Tokenizer::new(dialect.parser_dialect(), sql).tokenize().ok()?;
    let mut words = tokens
        .into_iter()
        .filter(|token| !matches!(token, Token::Whitespace(_)));
    match words.next()? {
        Token::Word(word) if word.keyword == Keyword::TABLE => {}
        _ => return None,
    }
    let rest: Vec<String> = words.map(|token| token.to_string()).collect();
    Some(format!("SELECT * FROM {}", rest.join(" ")))
}

fn parsed_query(sql: &str, dialect: SqlDialect, policy: &FunctionPolicy) -> Result<String, SqlRefused> {
    let statements = Parser::new(dialect.parser_dialect())
        .with_recursion_limit(RECURSION_LIMIT)
        .try_with_sql(sql)
        .and_then(|mut parser| parser.parse_statements())
        .map_err(|e| {
            SqlRefused::new(
                RefusalCode::Unparsable,
                format!(
                    "the SQL could not be read as {} SQL: {e}; {SEND_INSTEAD}",
                    dialect.as_str()
                ),
            )
        })?;
    let statement = match statements.as_slice() {
        [] => {
            return Err(SqlRefused::new(
                RefusalCode::Empty,
                format!("the SQL holds no statement; {SEND_INSTEAD}"),
            ));
        }
        [one] => one,
        several => {
            return Err(SqlRefused::new(
                RefusalCode::SeveralStatements,
                format!("the SQL holds {} statements; {SEND_INSTEAD}", several.len()),
            ));
        }
    };
    if !matches!(statement, Statement::Query(_)) {
        return Err(SqlRefused::new(
            RefusalCode::NotAQuery,
            format!(
                "`{}` is not a query; {SEND_INSTEAD}",
                leading_words(&statement.to_string())
            ),
        ));
    }
    if let ControlFlow::Break(refused) = statement.visit(&mut ReadOnly { dialect, policy }) {
        return Err(refused);
    }
    if dialect == SqlDialect::Sqlite
        && let Statement::Query(query) = statement
    {
        // SQLite reads no parenthesized query as a statement or a member of a set operation:
        // `(q)` is written as the `SELECT * FROM (q)` it means.
        let mut query = query.clone();
        unparenthesized(&mut query.body, dialect);
        return Ok(query.to_string());
    }
    Ok(statement.to_string())
}

/// Rewrites each parenthesized query of `body` (itself, or a member of its set operations) as
/// `SELECT * FROM (query)`.
fn unparenthesized(body: &mut SetExpr, dialect: SqlDialect) {
    match body {
        SetExpr::Query(inner) => {
            let select = format!("SELECT * FROM ({inner}) AS dual_member");
            if let Ok(mut parsed) = Parser::parse_sql(dialect.parser_dialect(), &select)
                && let Some(Statement::Query(query)) = parsed.pop()
            {
                *body = *query.body;
            }
        }
        SetExpr::SetOperation { left, right, .. } => {
            unparenthesized(left, dialect);
            unparenthesized(right, dialect);
        }
        _ => {}
    }
}

/// Walks every query and statement inside the one statement (CTEs, subqueries anywhere) and breaks at
/// the first part that does more than read.
struct ReadOnly<'p> {
    dialect: SqlDialect,
    policy: &'p FunctionPolicy,
}

impl ReadOnly<'_> {
    /// Refuses a call of the function `name` (its last part) when the dialect's policy does.
    fn function(&self, name: &ObjectName) -> ControlFlow<SqlRefused> {
        let last = match name.0.last() {
            Some(ObjectNamePart::Identifier(ident)) => ident.value.clone(),
            Some(other) => other.to_string(),
            None => return ControlFlow::Continue(()),
        };
        match self.policy.refusal(&last, self.dialect) {
            Some(reason) => ControlFlow::Break(SqlRefused::new(
                RefusalCode::FunctionRefused,
                format!("the function `{name}` is refused: {reason}; remove it"),
            )),
            None => ControlFlow::Continue(()),
        }
    }
}

impl Visitor for ReadOnly<'_> {
    type Break = SqlRefused;

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<SqlRefused> {
        match expr {
            Expr::Function(function) => self.function(&function.name),
            _ => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<SqlRefused> {
        match factor {
            // `FROM pg_ls_dir('/')`: a table-valued function.
            TableFactor::Table {
                name, args: Some(_), ..
            }
            | TableFactor::Function { name, .. } => self.function(name),
            _ => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<SqlRefused> {
        if matches!(statement, Statement::Query(_)) {
            return ControlFlow::Continue(());
        }
        ControlFlow::Break(SqlRefused::new(
            RefusalCode::DataModifying,
            format!(
                "the query holds `{}`, which is not a query; {SEND_INSTEAD}",
                leading_words(&statement.to_string())
            ),
        ))
    }

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<SqlRefused> {
        if let Some(lock) = query.locks.first() {
            return ControlFlow::Break(SqlRefused::new(
                RefusalCode::LockingClause,
                format!("the locking clause `{lock}` is refused: queries here only read; remove it"),
            ));
        }
        into_of(&query.body)
    }
}

/// Refuses a `SELECT … INTO` anywhere in the set expression `body`.
fn into_of(body: &SetExpr) -> ControlFlow<SqlRefused> {
    match body {
        SetExpr::Select(select) => match &select.into {
            Some(into) => ControlFlow::Break(SqlRefused::new(
                RefusalCode::SelectInto,
                format!("`{into}` is refused: queries here only read; remove the INTO clause"),
            )),
            None => ControlFlow::Continue(()),
        },
        SetExpr::SetOperation { left, right, .. } => {
            into_of(left)?;
            into_of(right)
        }
        // Nested queries and statements are visited on their own.
        _ => ControlFlow::Continue(()),
    }
}

/// The first words of `sql` (at most 6 words, 60 characters), to name a refused statement.
fn leading_words(sql: &str) -> String {
    let mut words = String::new();
    for word in sql.split_whitespace().take(6) {
        if words.len() + word.len() > 60 {
            words.push_str(" …");
            break;
        }
        if !words.is_empty() {
            words.push(' ');
        }
        words.push_str(word);
    }
    words
}

mod functions;
mod policy;

pub use policy::FunctionPolicy;

#[cfg(test)]
mod tests;

"""What ``scheduler-server`` checks before any worker starts.

Each check raises one ``SchedulerException`` whose first line says what is
wrong (secrets masked); ``scheduler-server`` prints it and exits 2.

* ``check_configuration(conf)``: every option value (oslo.config converts
  values lazily, so a bad one would otherwise surface in a worker), the
  transport URL as the workers read it, the filter and weigher names and
  multipliers, the policy file. Nothing is reached over the network: a
  SIGHUP runs the same check on the new files before it touches a worker
  (``scheduler.service.reload``), and ``scheduler-status`` can call
  ``configuration_problem(conf)``, the same check as one line or None.
* ``check_database(conf)``: the database answers and its schema is at
  this release's newest migration.
* ``check_broker(conf)``: one of the broker hosts of ``transport_url``
  accepts a connection, with the TLS settings the workers use.

The two last retry ``[DEFAULT] startup_retries`` times an error that may
pass (a refused connection, a timeout), and stop at once on a permanent
one, named as such: the broker refused the credentials or has no such
virtual host, the database or the role does not exist, the password is
wrong.
"""

import importlib.metadata
import re
import ssl
import time
from urllib.parse import urlsplit

import amqp.exceptions
import kombu
import oslo_messaging
from oslo_config import cfg
from oslo_log import log as logging

from scheduler import exception
from scheduler.db import api as db_api
from scheduler.db import migration
from scheduler.driver import plugins
from scheduler.rpc import messaging
from scheduler.nova import endpoint as nova_endpoint
from scheduler.edge import policy
from scheduler.service import broker_tls
from scheduler.service import masking
from scheduler.transport import broker as transport_broker

LOG = logging.getLogger(__name__)

# what a broker says that no retry changes
_PERMANENT_BROKER_ERRORS = (amqp.exceptions.AccessRefused,
                            amqp.exceptions.NotAllowed)
# what database servers say that no retry changes (PostgreSQL, MySQL and
# MariaDB codes 1044, 1045, 1049)
_PERMANENT_DATABASE_ERRORS = re.compile(
    r'database "[^"]*" does not exist|role "[^"]*" does not exist|'
    r'password authentication failed|no pg_hba.conf entry|'
    r'\((1044|1045|1049),')


class _Permanent(Exception):
    """A start-up probe failed in a way a retry cannot change."""


def check_config(conf):
    """Every option value, and ``transport_url`` as the workers read it
    (``oslo_messaging.TransportURL.parse``) with an installed driver."""
    for name in list(conf):
        value = _read(conf, None, name)
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            for opt_name in list(value):
                _read(value, name, opt_name)
    try:
        url = oslo_messaging.TransportURL.parse(conf, conf.transport_url)
    except oslo_messaging.InvalidTransportURL as exc:
        raise exception.ConfigInvalid(
            reason='invalid transport_url: %s' % masking.mask(exc))
    except ValueError:
        # its text may quote a piece of the password: not echoed
        raise exception.ConfigInvalid(
            reason='invalid transport_url %s: a host does not parse (the '
            'port must be a number; percent-encode "@", ":", "/" and "#" '
            'in a user name or password)' % masking.mask(conf.transport_url))
    drivers = {e.name for e in importlib.metadata.entry_points(
        group='oslo.messaging.drivers')}
    # oslo.messaging picks the driver by what comes before a '+'
    # (kombu+memory: the rabbit driver's in-memory transport)
    if url.transport and url.transport.split('+')[0] not in drivers:
        raise exception.ConfigInvalid(
            reason='transport_url %s: unknown transport %r (installed: %s)'
            % (masking.mask(conf.transport_url), url.transport,
               ', '.join(sorted(drivers))))
    if transport_broker.is_kombu_url(conf):
        # the servers' queue and TLS options, as they will read them
        try:
            transport_broker.Broker(conf).ssl_options()
        except transport_broker.BrokerConfigError as exc:
            raise exception.ConfigInvalid(reason=str(exc))


def _read(group, group_name, name):
    try:
        return group[name]
    except (cfg.Error, ValueError) as exc:
        # "Value for option X from LocationInfo(...) is not valid: why"
        why = str(exc).splitlines()[0].rsplit(' is not valid: ', 1)[-1]
        raise exception.ConfigInvalid(
            reason='invalid value for [%s] %s: %s' %
            (group_name or 'DEFAULT', name, why))


def check_configuration(conf):
    """Everything a worker builds from ``conf`` alone (module docstring):
    raises ``cfg.Error`` or a ``SchedulerException``."""
    check_config(conf)
    if conf.nova.enabled:
        nova_endpoint.check_options(conf)
    plugins.load_filters(conf)
    plugins.load_weighers(conf)
    policy.check_policy_file(conf)


def configuration_problem(conf):
    """``check_configuration`` as one line, or None when ``conf`` is
    usable."""
    try:
        check_configuration(conf)
    except (cfg.Error, exception.SchedulerException) as exc:
        return str(exc).splitlines()[0]
    return None


def _retry(conf, what, probe):
    """``probe()``, again while it fails with an error that may pass."""
    attempts = conf.startup_retries + 1
    for attempt in range(1, attempts + 1):
        try:
            return probe()
        except exception.InvalidRequest:
            raise
        except _Permanent as exc:
            raise exception.ConfigInvalid(reason='%s at %s: %s (a permanent '
                                          'error, not retried)' % (
                                              what[0], what[1], exc))
        except Exception as exc:  # any driver error means "not yet"
            if attempt == attempts:
                raise exception.ServiceUnavailable(
                    service=what[0], url=what[1],
                    reason='%s (after %d attempts)' % (
                        describe_error(exc), attempts))
            LOG.warning('%s not reachable (%s), retry %d/%d in %.1fs',
                        what[0], describe_error(exc), attempt, attempts - 1,
                        conf.startup_retry_interval)
            time.sleep(conf.startup_retry_interval)


def describe_error(exc):
    """``exc`` in one line, secrets masked: a database error without
    SQLAlchemy's statement or background link, only its driver's words."""
    inner = getattr(exc, 'inner_exception', None) or exc
    driver_error = getattr(inner, 'orig', None) or inner
    lines = [line.strip() for line in str(driver_error).splitlines()
             if line.strip()]
    why = lines[0] if lines else type(exc).__name__
    if isinstance(exc, ImportError):
        # postgresql:// means psycopg (3) to SQLAlchemy 2.1, mysql://
        # MySQLdb: neither is what this package installs
        why += ('; name a driver that is installed in the URL, e.g. '
                'postgresql+psycopg2:// or mysql+pymysql://')
    return masking.mask(why)


def check_database(conf):
    """Reach the DB and make sure its schema is current."""
    missing = migration.missing_sqlite_file(conf)
    if missing:     # never an empty file created by a probe
        # whole: an InvalidRequest cuts its text as if a caller wrote it
        raise exception.SchedulerException(missing)

    def probe():
        try:
            database = db_api.Database(conf, max_retries=0)
            try:
                return migration.db_version(database)
            finally:
                database.dispose()
        except Exception as exc:
            if isinstance(exc, ImportError) or \
                    _PERMANENT_DATABASE_ERRORS.search(str(exc)):
                raise _Permanent(describe_error(exc))
            raise

    version = _retry(
        conf, ('database', masking.mask(conf.database.connection)), probe)
    head = migration.head_revision()
    # a revision this release does not know is a later release's: its
    # migrations only add, so this release runs on it (rolling upgrades)
    if version != head and (version is None
                            or migration.is_known_revision(version)):
        raise exception.InvalidRequest(
            reason='database schema is at %s, expected %s: run '
            '"scheduler-manage db sync" first' % (version, head))


def check_broker(conf):
    """Reach at least one of the broker hosts of ``transport_url``, with
    the TLS settings of ``[oslo_messaging_rabbit]``."""
    urls = messaging.broker_urls(conf)
    if not urls:
        return

    def probe():
        errors = []
        for url in urls:
            connection = kombu.Connection(url, connect_timeout=5, ssl=(
                broker_tls.ssl_options(conf, urlsplit(url).hostname)))
            try:
                connection.connect()
                return
            except _PERMANENT_BROKER_ERRORS as exc:
                raise _Permanent(describe_error(exc))
            except ssl.SSLCertVerificationError as exc:
                # a CA that does not sign the broker's certificate stays so
                raise _Permanent(masking.mask(
                    broker_tls.describe_error(conf, exc)))
            except Exception as exc:
                errors.append('%s: %s' % (
                    masking.mask(url), broker_tls.describe_error(conf, exc)))
            finally:
                connection.release()
        raise ConnectionError('; '.join(errors))

    _retry(conf, ('message broker', masking.mask(conf.transport_url
                                                 or urls[0])), probe)

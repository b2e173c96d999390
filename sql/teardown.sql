-- teardown: stops the emulator sql/setup.sql started, if it started one
-- (not one named by LANCELSM_EMULATOR_PORT: its caller stops that).
SELECT started AS emu_started FROM emu_conf \gset
\if :emu_started
\! kill `cat tmp_check/regress-emulator/emulator.pid` 2>/dev/null
\endif

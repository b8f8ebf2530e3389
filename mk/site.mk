# The facility site's tonight page runs daemon/site_tonight.js; the daemon
# carries it as a C string (site_tonight.c includes the generated header).
$(B)/gen/site_tonight_js.h: daemon/site_tonight.js
	@mkdir -p $(@D)
	{ echo '/* generated from daemon/site_tonight.js by mk/site.mk */'; \
	  echo 'static const char site_tonight_js[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	  echo ';'; } >$@.tmp && mv $@.tmp $@

$(B)/obj/daemon/site_tonight.o: $(B)/gen/site_tonight_js.h
$(B)/obj/daemon/site_tonight.o: CPPFLAGS += -I$(B)/gen
